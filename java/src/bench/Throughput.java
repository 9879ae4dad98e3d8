package bench;

// Benchmark program for hprof attach: prints "READY <pid>", then, once a second for the
// number of seconds given (default 15), "rate <rounds>": how many rounds of a fixed CPU kernel
// it ran in that second, so a benchmark sees its speed before, while and after a profiler is
// attached. With a second argument "calls", each round makes 10,000 calls of a small method
// instead, so the rate shows what a profiler costs per call (cpu=times).

public class Throughput {
    static volatile long sink;

    static long kernel(long x) {
        for (int i = 0; i < 10_000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= (x >>> 29);
        }
        return x;
    }

    static long step(long x) {
        x = x * 6364136223846793005L + 1442695040888963407L;
        return x ^ (x >>> 29);
    }

    static long calls(long x) {
        for (int i = 0; i < 10_000; i++) {
            x = step(x);
        }
        return x;
    }

    public static void main(String[] args) {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 15;
        boolean calls = args.length > 1 && args[1].equals("calls");
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        long x = 1;
        for (int s = 0; s < seconds; s++) {
            long end = System.nanoTime() + 1_000_000_000L;
            long rounds = 0;
            while (System.nanoTime() < end) {
                x = calls ? calls(x) : kernel(x);
                rounds++;
            }
            sink += x;
            System.out.println("rate " + rounds);
            System.out.flush();
        }
    }
}
