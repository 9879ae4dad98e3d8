// Agent test program for hprof attach: prints "READY <pid>", then computes in hot() for the
// number of milliseconds given (default 20000), calling counted() a known number of times per
// round and allocating one byte[1024], then prints "finished <rounds>" and exits with status 3 (so a test sees that the
// program ran to its own end). It exits early when its standard input closes.

public class LongRunning {
    static volatile long sink;
    static volatile Object keep;

    static long hot(long n) {
        long x = n;
        for (int i = 0; i < 200_000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= (x >>> 29);
        }
        return x;
    }

    static void counted() {
        sink++;
    }

    public static void main(String[] args) throws Exception {
        long millis = args.length > 0 ? Long.parseLong(args[0]) : 20000;
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        Thread watcher = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // Input is ignored; its end ends the program.
                }
            } catch (Exception e) {
                // Same.
            }
            System.exit(4);
        }, "stdin watcher");
        watcher.setDaemon(true);
        watcher.start();
        long end = System.nanoTime() + millis * 1_000_000L;
        long rounds = 0;
        while (System.nanoTime() < end) {
            sink += hot(rounds++);
            keep = new byte[1024];
            for (int i = 0; i < 10; i++) {
                counted();
            }
        }
        System.out.println("finished " + rounds);
        System.exit(3);
    }
}
