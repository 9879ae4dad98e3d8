// Agent test program that ends in a chosen way while doing CPU work, so tests can check the
// profile is complete on every exit path. Argument: normal | exit-from-thread | uncaught |
// wait (prints READY and spins until killed by a signal) | dump-wait (prints READY, spins,
// and after a line on stdin spins a little more and returns) | crash (spins, then crashes the
// JVM with a write to address 0 through sun.misc.Unsafe: HotSpot's error handler aborts).

import java.io.BufferedReader;
import java.io.InputStreamReader;

public class ExitPaths {
    static volatile long sink;

    static void spin(long millis) {
        long end = System.nanoTime() + millis * 1_000_000L;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 100_000; i++) {
                sink += i * 31L;
            }
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
                System.out.flush();
                while (true) {
                    spin(100);
                }
            case "dump-wait":
                System.out.println("READY " + ProcessHandle.current().pid());
                System.out.flush();
                Thread spinner = new Thread(() -> {
                    while (true) {
                        spin(100);
                    }
                }, "spinner");
                spinner.setDaemon(true);
                spinner.start();
                new BufferedReader(new InputStreamReader(System.in)).readLine();
                spin(300);
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
