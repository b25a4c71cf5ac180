public class Branches {
    private static final int LIMIT = 10;
    private String name = "";

    public static int sign(int value) {
        if (value < 0) {
            return -1;
        } else if (value == 0) {
            return 0;
        } else {
            return 1;
        }
    }

    public static int clamp(int value, int low, int high) {
        int result;
        if (value < low) {
            result = low;
        } else {
            result = value;
        }
        if (result > high) {
            result = high;
        }
        return result;
    }

    public static String describe(int code) {
        String text;
        switch (code) {
            case 1:
            case 2:
                text = "small";
                break;
            case -3:
                return "negative";
            case 'x':
                text = "letter";
                break;
            default:
                text = "other";
        }
        return text;
    }

    public static int parse(String word) {
        switch (word) {
            case "one":
                return 1;
            case "two":
                return 2;
            default:
                return 0;
        }
    }

    public static int fallThrough(int k) {
        int r = 0;
        switch (k) {
            case 1:
                r += 1;
            case 2:
                r += 2;
                break;
            default:
                r = -1;
        }
        return r;
    }

    public boolean matches(String other, boolean strict) {
        if (other != null && other.length() > 0 && strict) {
            return other.equals("x") || name.equalsIgnoreCase(other);
        }
        boolean same = other == null ? name.isEmpty() : name.equals(other);
        int bonus = strict ? 1 : 0;
        return same && bonus >= 0 && "y".equals(other) == false;
    }

    public int ternary(int a, int b) {
        int max = a > b ? a : b;
        max = max > LIMIT ? LIMIT : max;
        if (a == b) {
            max = 0;
        } else {
            max = max + 1;
        }
        return a < 0 ? -max : max;
    }

    public static int flags(boolean p, boolean q) {
        int out = 0;
        if (p) {
            out = 1;
        } else {
            out = 2;
        }
        if (!q) {
            out += 10;
        } else {
            out -= 10;
        }
        if (p && q) {
            out *= 2;
        }
        return out;
    }
}
