import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

public class Names {
    private int count;

    public int count() {
        return count;
    }

    public static String join(List<String> parts, String separator) {
        StringBuilder buffer = new StringBuilder();
        for (String part : parts) {
            if (buffer.length() > 0) {
                buffer.append(separator);
            }
            buffer.append(part);
        }
        return buffer.toString();
    }

    public static Map<String, Integer> histogram(String text) {
        Map<String, Integer> counts = new HashMap<>();
        for (String word : text.split(" ")) {
            Integer seen = counts.get(word);
            counts.put(word, seen == null ? 1 : seen + 1);
        }
        return counts;
    }

    public static int readAll(String source) {
        int chars = 0;
        try (Reader reader = new StringReader(source)) {
            int read = reader.read();
            while (read != -1) {
                chars++;
                read = reader.read();
            }
        } catch (IOException problem) {
            return -1;
        }
        return chars;
    }

    public List<Integer> mapped(List<Integer> input) {
        Function<Integer, Integer> twice = value -> value * 2;
        List<Integer> output = new ArrayList<>();
        input.forEach(element -> output.add(twice.apply(element) + count));
        Runnable task = new Runnable() {
            @Override
            public void run() {
                int local = output.size();
                count = local;
            }
        };
        task.run();
        return output;
    }

    public Names(int initial) {
        int start = initial;
        this.count = start;
    }
}
