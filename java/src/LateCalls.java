// Agent test program for cpu=times started late (hprof attach): prints "READY <pid>", then
// reads commands from standard input, one a line:
//   run N    calls LateCalls.counted() N times (from batch(), a method entered anew each time)
//            and prints "ran N";
//   contend N  two threads ("contender-0", "contender-1") each enter LateCalls$Lock N times and
//            hold it 2 ms, so each waits for the other; prints "contended N" once both end;
//   probe    prints "probe <n>": the calls the agent's tracker counted on its shared "off"
//            state (probes still running while the tracker is off), read by reflection
//            (needs --add-opens java.base/java.lang=ALL-UNNAMED; -1 without a tracker);
//   spin MS  computes in LateCalls.spin until main has had MS more milliseconds of CPU time (so
//            a CPU sampler at 10 ms takes about MS / 10 samples of it), then prints "spun MS";
//   exit     prints "finished <total calls>" and exits with status 3.
// The end of its input ends it with status 4. Between commands it makes no call of counted(),
// so a profiler attached between two commands must count exactly the N calls of the runs it saw.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Field;

public class LateCalls {
    static volatile long sink;
    static long total;

    static void counted() {
        sink++;
    }

    static final class Lock {}

    static final Lock LOCK = new Lock();

    static void contend(int n) throws InterruptedException {
        Thread[] threads = new Thread[2];
        for (int t = 0; t < threads.length; t++) {
            threads[t] = new Thread(() -> {
                for (int i = 0; i < n; i++) {
                    synchronized (LOCK) {
                        try {
                            Thread.sleep(2);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }
            }, "contender-" + t);
        }
        for (Thread t : threads) {
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
    }

    static long probe() {
        try {
            Class<?> tracker = Class.forName("java.lang.HprofTracker");
            Field off = tracker.getDeclaredField("off");
            off.setAccessible(true);
            Object state = off.get(null);
            Field calls = state.getClass().getDeclaredField("calls");
            calls.setAccessible(true);
            return ((long[]) calls.get(state))[0];
        } catch (ClassNotFoundException e) {
            return -1;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return -2;
        }
    }

    static void spin(long millis) {
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long end = threads.getCurrentThreadCpuTime() + millis * 1_000_000L;
        while (threads.getCurrentThreadCpuTime() < end) {
            for (int i = 0; i < 100_000; i++) {
                sink += i * 31L;
            }
        }
    }

    static void batch(long n) {
        for (long i = 0; i < n; i++) {
            counted();
        }
        total += n;
    }

    public static void main(String[] args) throws Exception {
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.startsWith("run ")) {
                long n = Long.parseLong(line.substring(4).trim());
                batch(n);
                System.out.println("ran " + n);
                System.out.flush();
            } else if (line.startsWith("contend ")) {
                int n = Integer.parseInt(line.substring(8).trim());
                contend(n);
                System.out.println("contended " + n);
                System.out.flush();
            } else if (line.startsWith("spin ")) {
                long millis = Long.parseLong(line.substring(5).trim());
                spin(millis);
                System.out.println("spun " + millis);
                System.out.flush();
            } else if (line.equals("probe")) {
                System.out.println("probe " + probe());
                System.out.flush();
            } else if (line.equals("exit")) {
                System.out.println("finished " + total);
                System.out.flush();
                System.exit(3);
            }
        }
        System.exit(4);
    }
}
