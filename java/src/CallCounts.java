// Agent test program with exactly known call counts, for cpu=times. main calls, in order:
// fib(25) once (242785 calls of fib); sleeper() 3 times (~0 CPU each); spin(150) twice (150 ms
// of CPU time each, however loaded the machine); catcher() 100 times (thrower: 500 calls,
// afterCatch: 100, always from catcher); new Point(i, i) 500 times (each Point constructor:
// 500); 4 threads "worker-0".."worker-3" each run workerLoop() once, which calls work() 1000
// times (4000 in all); deep(2000) once (2001 calls).

public class CallCounts {
    static volatile long sink;
    static volatile int fibResult;

    static final class Point {
        final int x;
        final int y;
        final int z;

        Point(int x, int y) {
            this(x, y, 0);
        }

        Point(int x, int y, int z) {
            this.x = x;
            this.y = y;
            this.z = z;
        }
    }

    static int fib(int n) {
        return n < 2 ? n : fib(n - 1) + fib(n - 2);
    }

    static void sleeper() throws InterruptedException {
        Thread.sleep(200);
    }

    // Computes until the calling thread has had `millis` ms more of CPU time (not wall time:
    // a loaded machine gives it less CPU per second), reading its CPU time only every million
    // steps (a millisecond or so), so that spin, not the reading, holds the self time.
    static void spin(long millis) {
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long end = threads.getCurrentThreadCpuTime() + millis * 1_000_000L;
        long x = millis;
        while (threads.getCurrentThreadCpuTime() < end) {
            for (int i = 0; i < 1_000_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        }
        sink = x;
    }

    static int thrower(int depth) {
        if (depth == 0) {
            throw new IllegalStateException("bottom");
        }
        return thrower(depth - 1) + 1;
    }

    static int afterCatch() {
        return 42;
    }

    static void catcher() {
        try {
            sink += thrower(4);
        } catch (IllegalStateException e) {
            // Expected: the exception unwinds all five thrower frames.
        }
        sink += afterCatch();
    }

    static int work(int i) {
        return i * 31 + 7;
    }

    // Each worker thread's whole job: a named method (not a lambda) so its caller is unambiguous.
    static void workerLoop() {
        long sum = 0;
        for (int i = 0; i < 1000; i++) {
            sum += work(i);
        }
        sink += sum;
    }

    static int deep(int n) {
        return n == 0 ? 0 : deep(n - 1) + 1;
    }

    public static void main(String[] args) throws Exception {
        fibResult = fib(25);
        System.out.println("fib(25) = " + fibResult);

        sleeper();
        sleeper();
        sleeper();

        spin(150);
        spin(150);

        for (int i = 0; i < 100; i++) {
            catcher();
        }

        for (int i = 0; i < 500; i++) {
            sink += new Point(i, i).x;
        }

        Thread[] workers = new Thread[4];
        for (int t = 0; t < workers.length; t++) {
            workers[t] = new Thread(CallCounts::workerLoop, "worker-" + t);
            workers[t].start();
        }
        for (Thread t : workers) {
            t.join();
        }

        sink += deep(2000);
        System.out.println("CallCounts done");
    }
}
