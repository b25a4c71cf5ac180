import java.util.ArrayList;
import java.util.List;

public class Loops {
    private int total;

    public static int sumRange(int[] values, int limit) {
        int sum = 0;
        for (int index = 0; index < limit && index < values.length; index++) {
            sum += values[index];
        }
        return sum;
    }

    public static int countDown(int start) {
        int steps = 0;
        int current = start;
        while (current > 0) {
            steps++;
            current--;
        }
        return steps;
    }

    public static int skipNegatives(int[] values) {
        int kept = 0;
        for (int value : values) {
            if (value < 0) {
                continue;
            }
            kept += value;
            kept = kept * 1;
        }
        return kept;
    }

    public static int digits(int number) {
        int count = 0;
        do {
            number = number / 10;
            count++;
        } while (number != 0);
        return count;
    }

    public static List<String> evens(int bound) {
        List<String> result = new ArrayList<>();
        for (int i = 0, j = bound; i < j; i++, j--) {
            if (i % 2 == 0) {
                result.add("e" + i);
            }
        }
        for (int k = 0; k < bound; k++) {
            if (k == 3) continue;
            result.add("k" + k);
        }
        outer:
        for (int a = 0; a < bound; a++) {
            for (int b = 0; b < a; b++) {
                if (a * b > bound) {
                    continue outer;
                }
            }
        }
        return result;
    }

    public int accumulate(int[] deltas) {
        int i = 0;
        while (i < deltas.length) {
            if (deltas[i] == 0) {
                i++;
                continue;
            }
            this.total += deltas[i];
            i += 1;
        }
        for (;;) {
            if (total > 100) {
                break;
            }
            total++;
        }
        return total;
    }

    public static long product(int n) {
        long acc = 1L;
        int m = n;
        while (m > 1) {
            acc *= m;
            m -= 1;
        }
        int x;
        x = 3;
        return acc + x;
    }
}
