// Agent test program for a JNI library that takes SIGPROF: loads the library at LIBRARY
// (argument 1), whose install() puts its own SIGPROF handler in place (after the agent's) and
// counts the signals it gets; then computes for SECONDS (argument 2) in compute(), raises
// SIGPROF RAISED times itself (argument 3; raiseOwn(), the library's own signals, in a thread
// of its own that the JVM does not know; an exception if it cannot start that thread), and
// prints "handler got N" (the signals the library's handler counted), "compute NS" (the CPU
// time compute() took), then "done".

public class SigTaker {
    static volatile long sink;

    static native void install();

    static native int raiseOwn(int times);

    static native long count();

    static long compute(long deadline) {
        long x = 1;
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < 100_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        }
        return x;
    }

    public static void main(String[] args) {
        System.load(args[0]);
        install();
        java.lang.management.ThreadMXBean mx =
                java.lang.management.ManagementFactory.getThreadMXBean();
        long deadline = System.nanoTime() + (long) (Double.parseDouble(args[1]) * 1e9);
        long before = mx.getCurrentThreadCpuTime();
        sink += compute(deadline);
        long computed = mx.getCurrentThreadCpuTime() - before;
        int raised = raiseOwn(Integer.parseInt(args[2]));
        if (raised < 0) {
            throw new IllegalStateException("the library could not start its raising thread");
        }
        System.out.println("handler got " + count());
        System.out.println("compute " + computed);
        System.out.println("done");
    }
}
