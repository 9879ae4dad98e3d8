// Agent test program that ends in a chosen way while doing CPU work, so tests can check the
// profile is complete on every exit path. Argument:
//   normal | exit-from-thread | uncaught: spin(300) once, then return, System.exit(3) from a
//     thread, or throw;
//   wait: prints READY, then warms up (spin(10) until the main thread has had 100 ms of CPU),
//     prints "WARM <calls of spin>", and spins until killed by a signal;
//   dump-wait: prints READY; main and a "spinner" thread each warm up in before() (as above),
//     then main prints "WARM <calls of spin by both>" and both wait, using no CPU, for a line on
//     stdin; then each calls after(), which calls spin(100) three times, and main returns;
//   crash: spins, then crashes the JVM with a write to address 0 through sun.misc.Unsafe
//     (HotSpot's error handler aborts).
// spin(ms) spins until the calling thread has had ms milliseconds of CPU time (not wall time),
// so a CPU sampler at interval I takes about ms / I samples of it however loaded the machine.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CountDownLatch;

public class ExitPaths {
    static volatile long sink;
    static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    static long cpuNanos() {
        return THREADS.getCurrentThreadCpuTime();
    }

    static void spin(long millis) {
        long end = cpuNanos() + millis * 1_000_000L;
        while (cpuNanos() < end) {
            for (int i = 0; i < 100_000; i++) {
                sink += i * 31L;
            }
        }
    }

    // Calls spin(10) until the calling thread has had 100 ms of CPU; returns the calls.
    static int before() {
        long end = cpuNanos() + 100_000_000L;
        int calls = 0;
        do {
            spin(10);
            calls++;
        } while (cpuNanos() < end);
        return calls;
    }

    static void after() {
        for (int i = 0; i < 3; i++) {
            spin(100);
        }
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "normal";
        switch (mode) {
            case "normal":
                spin(300);
                break;
            case "exit-from-thread":
                Thread t = new Thread(() -> {
                    spin(300);
                    System.exit(3);
                }, "exiter");
                t.start();
                t.join();
                throw new AssertionError("System.exit returned");
            case "uncaught":
                spin(300);
                throw new IllegalStateException("deliberate");
            case "wait":
                System.out.println("READY " + ProcessHandle.current().pid());
                System.out.println("WARM " + before());
                System.out.flush();
                while (true) {
                    spin(100);
                }
            case "dump-wait":
                System.out.println("READY " + ProcessHandle.current().pid());
                System.out.flush();
                CountDownLatch warm = new CountDownLatch(1);
                CountDownLatch go = new CountDownLatch(1);
                int[] spinnerCalls = new int[1];
                Thread spinner = new Thread(() -> {
                    spinnerCalls[0] = before();
                    warm.countDown();
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                    after();
                }, "spinner");
                spinner.start();
                int mainCalls = before();
                warm.await();
                System.out.println("WARM " + (mainCalls + spinnerCalls[0]));
                System.out.flush();
                new BufferedReader(new InputStreamReader(System.in)).readLine();
                go.countDown();
                after();
                spinner.join();
                break;
            case "crash":
                spin(300);
                java.lang.reflect.Field field = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
                field.setAccessible(true);
                Object unsafe = field.get(null);
                unsafe.getClass().getMethod("putAddress", long.class, long.class).invoke(unsafe, 0L, 42L);
                throw new AssertionError("the write to address 0 returned");
            default:
                throw new IllegalArgumentException(mode);
        }
    }
}
