// Agent test program for the samplers' accuracy: programs whose true CPU profile is known, or
// measured by the program itself. Modes (argument 1), each running for SECONDS (argument 2):
//   inline   a loop calling a small method the JIT inlines, which holds > 99 % of the CPU
//            (four calls of twenty dependent multiply-xorshift steps each against the loop's
//            one increment and test), for SECONDS of the main thread's CPU time, not wall time;
//   kernels  four threads running four kernels, each busy for 1, 2, 4 and 8 ms between sleeps
//            of 5 ms (the clock reads of a burst inside the kernel's frame), each until it has
//            had the CPU time it would have in SECONDS on an idle machine (so a loaded machine
//            lengthens the run, not the profile); each prints its own CPU time
//            ("kernel NAME CPU_NS") at the end;
//   native   a loop that reads its own CPU time (a short native call) between slices of
//            computation; prints the time spent in each ("native NS", "compute NS");
//   wall     "sleeper" sleeps, "blocked" waits to enter a monitor "holder" keeps, "spinner"
//            computes; all for the whole run;
//   gc       "collector" calls System.gc() in a loop while "allocator" allocates;
//   virtual  (JDK 21+) a virtual thread computing in virtualWork() until the process has had
//            SECONDS of CPU time (so the samples, one per interval of CPU, are as many however
//            loaded the machine is); prints "no virtual threads" on older JDKs;
//   vshared  (JDK 21+) two virtual threads named "vt-alpha" and "vt-beta", computing in
//            alphaWork() and betaWork(), on one carrier, parking 0.1 ms after each slice of work;
//   vpinned  the same two, each on a carrier of its own, never yielding;
//   vmany    (JDK 21+) 100,000 virtual threads (1,000 at a time), each computing a little and
//            parking once; prints "elapsed_ms N" (the benchmark of following virtual threads);
//   churn    2,000 short platform threads (4 at a time) and, on JDK 21+, 100,000 virtual
//            threads, each computing a little; then prints "threads N" (live Java threads).
// Every mode then prints "timers N" (the POSIX timers the process holds, from /proc/self/timers)
// and "perf_events N" (its perf event descriptors, from /proc/self/fd), and "done".

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class Sampling {
    static volatile long sink;

    static long step(long x) {
        x = x * 0x9E3779B97F4A7C15L + 1;
        x ^= x >>> 17;
        x = x * 0x9E3779B97F4A7C15L + 3;
        x ^= x >>> 18;
        x = x * 0x9E3779B97F4A7C15L + 5;
        x ^= x >>> 19;
        x = x * 0x9E3779B97F4A7C15L + 7;
        x ^= x >>> 20;
        x = x * 0x9E3779B97F4A7C15L + 9;
        x ^= x >>> 21;
        x = x * 0x9E3779B97F4A7C15L + 11;
        x ^= x >>> 22;
        x = x * 0x9E3779B97F4A7C15L + 13;
        x ^= x >>> 23;
        x = x * 0x9E3779B97F4A7C15L + 15;
        x ^= x >>> 24;
        x = x * 0x9E3779B97F4A7C15L + 17;
        x ^= x >>> 25;
        x = x * 0x9E3779B97F4A7C15L + 19;
        x ^= x >>> 26;
        x = x * 0x9E3779B97F4A7C15L + 21;
        x ^= x >>> 27;
        x = x * 0x9E3779B97F4A7C15L + 23;
        x ^= x >>> 28;
        x = x * 0x9E3779B97F4A7C15L + 25;
        x ^= x >>> 29;
        x = x * 0x9E3779B97F4A7C15L + 27;
        x ^= x >>> 17;
        x = x * 0x9E3779B97F4A7C15L + 29;
        x ^= x >>> 18;
        x = x * 0x9E3779B97F4A7C15L + 31;
        x ^= x >>> 19;
        x = x * 0x9E3779B97F4A7C15L + 33;
        x ^= x >>> 20;
        x = x * 0x9E3779B97F4A7C15L + 35;
        x ^= x >>> 21;
        x = x * 0x9E3779B97F4A7C15L + 37;
        x ^= x >>> 22;
        x = x * 0x9E3779B97F4A7C15L + 39;
        x ^= x >>> 23;
        return x;
    }

    static long loop(long x, long n) {
        for (long i = 0; i < n; i++) {
            x = step(step(step(step(x))));
        }
        return x;
    }

    // Each kernel computes for MILLIS of wall time, reading the clock between slices of work:
    // the whole burst, clock reads included, is the kernel's own frame, so the thread's CPU
    // time is the kernel's (but for the sleeps between bursts). Kernel A reads the clock most
    // often per unit of work (a slice of about 0.1-1.5 us between System.nanoTime calls).

    static long kernelA(long millis) {
        long end = System.nanoTime() + millis * 1_000_000L;
        long x = 1;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 1000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        }
        return x;
    }

    static long kernelB(long millis) {
        long end = System.nanoTime() + millis * 1_000_000L;
        long x = 1;
        long[] a = new long[64];
        while (System.nanoTime() < end) {
            for (int i = 0; i < 1000; i++) {
                a[i & 63] += x ^ i;
                x += a[(i * 7) & 63];
            }
        }
        return x;
    }

    static long kernelC(long millis) {
        long end = System.nanoTime() + millis * 1_000_000L;
        double d = 1;
        while (System.nanoTime() < end) {
            for (int i = 1; i < 1000; i++) {
                d = Math.sqrt(d + i) * 1.0001;
            }
        }
        return (long) d;
    }

    static long kernelD(long millis) {
        long end = System.nanoTime() + millis * 1_000_000L;
        long x = 1;
        while (System.nanoTime() < end) {
            for (int i = 1; i < 1000; i++) {
                x = x / (i | 1) + x * 31 + i;
            }
        }
        return x;
    }

    interface Kernel {
        long run(long millis);
    }

    static long deadline;

    /** SECONDS (argument 2), for the modes that measure CPU time rather than wall time. */
    static double seconds;

    static Thread kernelThread(String name, Kernel kernel, long millis, long[] cpu, int index) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        // The CPU time this thread has in SECONDS on an idle machine (busy `millis`, then 5 ms
        // asleep): it runs until it has had that much, so that a loaded machine makes the run
        // longer (at most a minute) but not the profile smaller.
        long budget = (long) (seconds * 1e9 * millis / (millis + 5));
        long cap = System.nanoTime() + 60_000_000_000L;
        Thread t = new Thread(() -> {
            try {
                while (mx.getCurrentThreadCpuTime() < budget && System.nanoTime() < cap) {
                    sink += kernel.run(millis);
                    Thread.sleep(5);
                }
            } catch (InterruptedException e) {
                return;
            }
            cpu[index] = mx.getCurrentThreadCpuTime();
        }, name);
        t.start();
        return t;
    }

    static void kernels() throws Exception {
        long[] cpu = new long[4];
        Thread[] threads = {
            kernelThread("kernel-A", Sampling::kernelA, 1, cpu, 0),
            kernelThread("kernel-B", Sampling::kernelB, 2, cpu, 1),
            kernelThread("kernel-C", Sampling::kernelC, 4, cpu, 2),
            kernelThread("kernel-D", Sampling::kernelD, 8, cpu, 3),
        };
        for (Thread t : threads) {
            t.join();
        }
        String[] names = {"A", "B", "C", "D"};
        for (int i = 0; i < 4; i++) {
            System.out.println("kernel " + names[i] + " " + cpu[i]);
        }
    }

    static void nativeCalls() {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long inNative = 0;
        long computing = 0;
        long x = 1;
        while (System.nanoTime() < deadline) {
            long t0 = System.nanoTime();
            for (int i = 0; i < 20; i++) {
                x += mx.getCurrentThreadCpuTime();
            }
            long t1 = System.nanoTime();
            x = loop(x, 20_000);
            long t2 = System.nanoTime();
            inNative += t1 - t0;
            computing += t2 - t1;
        }
        sink += x;
        System.out.println("native " + inNative);
        System.out.println("compute " + computing);
    }

    static void wall() throws Exception {
        Object lock = new Object();
        Thread holder = new Thread(() -> {
            synchronized (lock) {
                sleepUntilDeadline();
            }
        }, "holder");
        holder.start();
        Thread.sleep(100);
        Thread blocked = new Thread(() -> {
            synchronized (lock) {
                sink++;
            }
        }, "blocked");
        Thread sleeper = new Thread(Sampling::sleepUntilDeadline, "sleeper");
        Thread spinner = new Thread(() -> {
            long x = 1;
            while (System.nanoTime() < deadline) {
                x = loop(x, 100_000);
            }
            sink += x;
        }, "spinner");
        blocked.start();
        sleeper.start();
        spinner.start();
        for (Thread t : new Thread[] {holder, blocked, sleeper, spinner}) {
            t.join();
        }
    }

    static void sleepUntilDeadline() {
        try {
            while (System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
        } catch (InterruptedException e) {
            // The run ends.
        }
    }

    static void gc() throws Exception {
        Thread collector = new Thread(() -> {
            while (System.nanoTime() < deadline) {
                System.gc();
            }
        }, "collector");
        Thread allocator = new Thread(() -> {
            Object[] keep = new Object[1024];
            int i = 0;
            while (System.nanoTime() < deadline) {
                keep[i++ & 1023] = new byte[256];
            }
            sink += keep.length;
        }, "allocator");
        collector.start();
        allocator.start();
        collector.join();
        allocator.join();
    }

    static volatile boolean stopVirtual;

    static void virtualWork() {
        long x = 1;
        while (!stopVirtual) {
            x = loop(x, 100_000);
        }
        sink += x;
    }

    static void virtual() throws Exception {
        java.lang.reflect.Method start;
        try {
            start = Thread.class.getMethod("startVirtualThread", Runnable.class);
        } catch (NoSuchMethodException e) {
            System.out.println("no virtual threads");
            return;
        }
        long budget = deadline - System.nanoTime();
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long end = os.getProcessCpuTime() + budget;
        Thread t = (Thread) start.invoke(null, (Runnable) Sampling::virtualWork);
        while (os.getProcessCpuTime() < end) {
            Thread.sleep(10);
        }
        stopVirtual = true;
        t.join();
    }

    static long alphaWork(long x) {
        for (int i = 0; i < 50_000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= x >>> 29;
        }
        return x;
    }

    static long betaWork(long x) {
        for (int i = 0; i < 50_000; i++) {
            x = x * 0x9E3779B97F4A7C15L + 7;
            x ^= x >>> 31;
        }
        return x;
    }

    /** Starts a virtual thread named NAME running TASK (JDK 21+, through reflection). */
    static Thread startNamedVirtual(String name, Runnable task) throws Exception {
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Class<?> builderClass = Class.forName("java.lang.Thread$Builder");
        builder = builderClass.getMethod("name", String.class).invoke(builder, name);
        return (Thread) builderClass.getMethod("start", Runnable.class).invoke(builder, task);
    }

    /**
     * Two named virtual threads, "vt-alpha" computing in alphaWork and "vt-beta" in betaWork.
     * With yield, both run on one carrier and park for 0.1 ms between slices of work, so the
     * carrier alternates between them; without, each keeps a carrier of its own.
     */
    static void namedVirtual(boolean yield) throws Exception {
        try {
            Thread.class.getMethod("ofVirtual");
        } catch (NoSuchMethodException e) {
            System.out.println("no virtual threads");
            return;
        }
        if (yield) {
            System.setProperty("jdk.virtualThreadScheduler.parallelism", "1");
            System.setProperty("jdk.virtualThreadScheduler.maxPoolSize", "1");
        }
        Thread alpha = startNamedVirtual("vt-alpha", () -> {
            long x = 1;
            while (System.nanoTime() < deadline) {
                x = alphaWork(x);
                if (yield) {
                    java.util.concurrent.locks.LockSupport.parkNanos(100_000);
                }
            }
            sink += x;
        });
        Thread beta = startNamedVirtual("vt-beta", () -> {
            long x = 2;
            while (System.nanoTime() < deadline) {
                x = betaWork(x);
                if (yield) {
                    java.util.concurrent.locks.LockSupport.parkNanos(100_000);
                }
            }
            sink += x;
        });
        alpha.join();
        beta.join();
    }

    /**
     * 100,000 virtual threads (1,000 at a time), each computing a little, parking once (so it
     * mounts twice) and computing again; prints "elapsed_ms N" for the whole.
     */
    static void manyVirtual() throws Exception {
        java.lang.reflect.Method start;
        try {
            start = Thread.class.getMethod("startVirtualThread", Runnable.class);
        } catch (NoSuchMethodException e) {
            System.out.println("no virtual threads");
            return;
        }
        long began = System.nanoTime();
        java.util.List<Thread> batch = new java.util.ArrayList<>();
        for (int i = 0; i < 100_000; i++) {
            batch.add((Thread) start.invoke(null, (Runnable) () -> {
                sink += loop(sink, 100);
                java.util.concurrent.locks.LockSupport.parkNanos(1_000);
                sink += loop(sink, 100);
            }));
            if (batch.size() == 1000) {
                for (Thread t : batch) {
                    t.join();
                }
                batch.clear();
            }
        }
        for (Thread t : batch) {
            t.join();
        }
        System.out.println("elapsed_ms " + (System.nanoTime() - began) / 1_000_000);
    }

    static void churn() throws Exception {
        for (int round = 0; round < 500; round++) {
            Thread[] batch = new Thread[4];
            for (int i = 0; i < batch.length; i++) {
                batch[i] = new Thread(() -> sink += loop(sink, 5_000), "churn-" + round + "-" + i);
                batch[i].start();
            }
            for (Thread t : batch) {
                t.join();
            }
        }
        java.lang.reflect.Method start;
        try {
            start = Thread.class.getMethod("startVirtualThread", Runnable.class);
        } catch (NoSuchMethodException e) {
            start = null;
        }
        if (start != null) {
            java.util.List<Thread> batch = new java.util.ArrayList<>();
            for (int i = 0; i < 100_000; i++) {
                batch.add((Thread) start.invoke(null, (Runnable) () -> sink += loop(sink, 200)));
                if (batch.size() == 1000) {
                    for (Thread t : batch) {
                        t.join();
                    }
                    batch.clear();
                }
            }
            for (Thread t : batch) {
                t.join();
            }
        }
        System.out.println("threads " + Thread.activeCount());
    }

    /** Prints "timers N" (the POSIX timers the process holds) and "perf_events N" (its perf
     * event descriptors). */
    static void printTimers() throws Exception {
        long timers = java.nio.file.Files.readAllLines(java.nio.file.Paths.get("/proc/self/timers"))
                .stream().filter(l -> l.startsWith("ID:")).count();
        long perf = 0;
        try (java.nio.file.DirectoryStream<java.nio.file.Path> fds =
                java.nio.file.Files.newDirectoryStream(java.nio.file.Paths.get("/proc/self/fd"))) {
            for (java.nio.file.Path fd : fds) {
                try {
                    if (java.nio.file.Files.readSymbolicLink(fd).toString().contains("perf_event")) {
                        perf++;
                    }
                } catch (java.io.IOException e) {
                    // closed meanwhile (the directory stream's own descriptor)
                }
            }
        }
        System.out.println("timers " + timers);
        System.out.println("perf_events " + perf);
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        seconds = Double.parseDouble(args[1]);
        deadline = System.nanoTime() + (long) (seconds * 1e9);
        switch (mode) {
            case "inline": {
                // For SECONDS of the main thread's CPU time, not wall time: the JVM's start-up
                // (class loading, in the same thread, before main) stays a small, fixed part of
                // the samples however loaded the machine is.
                java.lang.management.ThreadMXBean mx =
                        java.lang.management.ManagementFactory.getThreadMXBean();
                long cpuEnd = mx.getCurrentThreadCpuTime() + (long) (seconds * 1e9);
                long x = 1;
                while (mx.getCurrentThreadCpuTime() < cpuEnd) {
                    x = loop(x, 1_000_000);
                }
                sink += x;
                break;
            }
            case "kernels":
                kernels();
                break;
            case "native":
                nativeCalls();
                break;
            case "wall":
                wall();
                break;
            case "gc":
                gc();
                break;
            case "virtual":
                virtual();
                break;
            case "churn":
                churn();
                break;
            case "vshared":
                namedVirtual(true);
                break;
            case "vpinned":
                namedVirtual(false);
                break;
            case "vmany":
                manyVirtual();
                break;
            default:
                throw new IllegalArgumentException("unknown mode " + mode);
        }
        printTimers();
        System.out.println("done");
    }
}
