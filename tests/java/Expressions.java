import java.util.Map;

public class Expressions {
    private int counter;
    private double ratio = 0.5;

    public static int arithmetic(int a, int b, int c) {
        int x = a + b * c;
        int y = (a - b) * (c + 2);
        x += y;
        y -= x / 3;
        x *= a - 1;
        int z = x % 7, w = y << 2;
        long big = 2147483647L;
        big += z;
        short s = 3;
        s += 1;
        s++;
        return x + y + z + w + (int) big + s;
    }

    public static double mix(double d, int n, float f) {
        double r = d / (n + 1) + n % 3;
        r *= f;
        f += n;
        n++;
        ++n;
        --n;
        return r + f + n;
    }

    public int bump(int[] data, int i) {
        int first = i++;
        int second = ++i;
        counter++;
        this.counter += first;
        data[0] += second;
        int last = data.length - 1;
        int mid = last / 2;
        return counter + mid + (first == second ? 1 : 0);
    }

    public static String label(String key, Map<String, Integer> table) {
        String prefix = "k";
        String out = prefix + key;
        if (key.equals("none") || table.isEmpty()) {
            return out;
        }
        out += table.size();
        char c = 'a';
        c += 1;
        boolean ok = true;
        ok &= key.length() > 2;
        return out + c + ok;
    }

    public static int constants(int v) {
        final int base = 100;
        int a = 0;
        int b = 1;
        int limit = base * 2;
        if (v > limit) {
            v = limit;
        }
        return a + b + v;
    }

    public double scaled(double value) {
        double result = value * ratio;
        result = result + 1.0;
        return result >= 10 ? 10 : result;
    }
}
