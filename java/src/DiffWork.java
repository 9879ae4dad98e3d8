// Test program for `hprof diff` on profiles: main calls a(), b() and c() in turn, each a slice
// of the same computation, b's slice PERCENT percent of the others' (argument 1, default 100),
// until its thread has used MILLIS milliseconds of CPU time (argument 2, default 2000), so the
// profile holds as many samples on a busy machine as on an idle one. Prints the CPU time its
// thread spent in each method ("cpu a NS", "cpu b NS", "cpu c NS") and in the whole run
// ("cpu all NS").

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class DiffWork {
    static volatile long sink;
    static final int SLICE = 400_000;

    static long a(long x) {
        for (int i = 0; i < SLICE; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= (x >>> 29);
        }
        return x;
    }

    static long b(long x, int percent) {
        int n = SLICE / 100 * percent;
        for (int i = 0; i < n; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= (x >>> 29);
        }
        return x;
    }

    static long c(long x) {
        for (int i = 0; i < SLICE; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= (x >>> 29);
        }
        return x;
    }

    public static void main(String[] args) {
        int percent = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        long millis = args.length > 1 ? Long.parseLong(args[1]) : 2000;
        ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        long start = bean.getCurrentThreadCpuTime();
        long end = start + millis * 1_000_000L;
        long inA = 0, inB = 0, inC = 0, x = 1;
        while (bean.getCurrentThreadCpuTime() < end) {
            long t0 = bean.getCurrentThreadCpuTime();
            x = a(x);
            long t1 = bean.getCurrentThreadCpuTime();
            x = b(x, percent);
            long t2 = bean.getCurrentThreadCpuTime();
            x = c(x);
            long t3 = bean.getCurrentThreadCpuTime();
            inA += t1 - t0;
            inB += t2 - t1;
            inC += t3 - t2;
        }
        sink = x;
        System.out.println("cpu a " + inA);
        System.out.println("cpu b " + inB);
        System.out.println("cpu c " + inC);
        System.out.println("cpu all " + (bean.getCurrentThreadCpuTime() - start));
    }
}
