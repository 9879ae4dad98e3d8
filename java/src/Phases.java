// Test program for time ranges: main computes in first() for the first MILLIS (default 2000)
// milliseconds, prints "switch <epoch milliseconds>", computes in second() for as long again,
// then prints "done". Nothing else runs.

public class Phases {
    static volatile long sink;

    static long spin(long n) {
        long x = n;
        for (int i = 0; i < 100_000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= (x >>> 29);
        }
        return x;
    }

    static void first(long until) {
        long n = 0;
        while (System.nanoTime() < until) {
            sink += spin(n++);
        }
    }

    static void second(long until) {
        long n = 0;
        while (System.nanoTime() < until) {
            sink += spin(n++) ^ 1;
        }
    }

    public static void main(String[] args) {
        long millis = args.length > 0 ? Long.parseLong(args[0]) : 2000;
        long start = System.nanoTime();
        first(start + millis * 1_000_000L);
        System.out.println("switch " + System.currentTimeMillis());
        second(start + 2 * millis * 1_000_000L);
        System.out.println("done");
    }
}
