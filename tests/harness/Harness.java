import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Runs the public static methods of an original class and of a transformed copy on the same
 * inputs and reports every difference in result or exception. Arguments: a file of lines
 * "original.Class variant.Class label". Prints "MISMATCH ..." lines and a final "checked N".
 */
public class Harness {
    static final int TUPLES = 16;

    static Object[] values(Class<?> t) {
        if (t == int.class) return new Object[] {-3, -1, 0, 1, 2, 5, 13, 100};
        if (t == long.class) return new Object[] {-3L, 0L, 1L, 7L, 40L};
        if (t == double.class) return new Object[] {-2.5, 0.0, 1.5, 7.25};
        if (t == float.class) return new Object[] {-1.5f, 0.0f, 2.5f};
        if (t == boolean.class) return new Object[] {true, false};
        if (t == String.class) return new Object[] {"", "one", "two", "x", "none", "a b a"};
        if (t == int[].class) return new Object[] {new int[] {}, new int[] {1, -2, 3}, new int[] {5, 0, -1, 4, 2}};
        return null;
    }

    static String show(Object o) {
        if (o instanceof int[]) return Arrays.toString((int[]) o);
        return String.valueOf(o);
    }

    static Object[] copy(Object[] args) {
        Object[] out = args.clone();
        for (int i = 0; i < out.length; i++) {
            if (out[i] instanceof int[]) out[i] = ((int[]) out[i]).clone();
        }
        return out;
    }

    static String run(ExecutorService pool, Method m, Object[] args) {
        Future<String> f = pool.submit(() -> {
            try {
                Object r = m.invoke(null, copy(args));
                return "= " + show(r);
            } catch (java.lang.reflect.InvocationTargetException e) {
                return "throws " + e.getCause().getClass().getName();
            }
        });
        try {
            return f.get(5, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            f.cancel(true);
            return "timeout";
        } catch (Exception e) {
            return "harness " + e;
        }
    }

    public static void main(String[] argv) throws Exception {
        ExecutorService pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r);
            t.setDaemon(true);
            return t;
        });
        int checked = 0;
        for (String line : Files.readAllLines(Paths.get(argv[0]))) {
            String[] parts = line.split(" ", 3);
            Class<?> a = Class.forName(parts[0]);
            Class<?> b = Class.forName(parts[1]);
            for (Method ma : a.getDeclaredMethods()) {
                if (!Modifier.isStatic(ma.getModifiers()) || !Modifier.isPublic(ma.getModifiers())) continue;
                Class<?>[] ps = ma.getParameterTypes();
                List<Object[]> domains = new ArrayList<>();
                boolean ok = true;
                for (Class<?> p : ps) {
                    Object[] v = values(p);
                    if (v == null) { ok = false; break; }
                    domains.add(v);
                }
                if (!ok) continue;
                Method mb = b.getDeclaredMethod(ma.getName(), ps);
                for (int k = 0; k < TUPLES; k++) {
                    Object[] args = new Object[ps.length];
                    for (int j = 0; j < ps.length; j++) {
                        Object[] d = domains.get(j);
                        args[j] = d[(k * (j + 1) + j * 3 + k / d.length) % d.length];
                    }
                    String ra = run(pool, ma, args);
                    String rb = run(pool, mb, args);
                    checked++;
                    if (!ra.equals(rb)) {
                        System.out.println("MISMATCH " + parts[2] + " :: " + ma.getName() + Arrays.deepToString(args) + " original " + ra + " transformed " + rb);
                    }
                }
            }
        }
        System.out.println("checked " + checked);
    }
}
