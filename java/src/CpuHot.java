// Agent test program with a known CPU profile: main spends nearly all its time in hot(), a
// little in warm(), while another thread ("acceptor") is blocked in ServerSocket.accept() for
// the whole run and uses no CPU. Argument: how long main computes, in milliseconds of its own
// CPU time (default 1500; so a sampler at 10 ms of CPU takes about a tenth as many samples of
// it however loaded the machine is). Prints "done <rounds>" and "cpu <ms>", the CPU time main
// had (JVM start-up included), then "acceptor closed" when the server's close at the end of the
// run ended the acceptor's accept() ("acceptor failed: ..." if anything else did).

import java.net.ServerSocket;

public class CpuHot {
    static volatile long sink;
    static volatile String acceptorEnd = "still running";

    static long hot(long n) {
        long x = n;
        for (int i = 0; i < 1_000_000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= (x >>> 29);
        }
        return x;
    }

    static long warm(long n) {
        long x = n;
        for (int i = 0; i < 10_000; i++) {
            x += i ^ (x >>> 3);
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        long millis = args.length > 0 ? Long.parseLong(args[0]) : 1500;
        ServerSocket server = new ServerSocket(0);
        Thread acceptor = new Thread(() -> {
            try {
                server.accept();
                acceptorEnd = "accepted a connection";
            } catch (Exception e) {
                // Closed at the end of the run; anything else (an accept() a signal broke with
                // EINTR) is said.
                acceptorEnd = server.isClosed() ? "closed" : "failed: " + e;
            }
        }, "acceptor");
        acceptor.setDaemon(true);
        acceptor.start();
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long end = threads.getCurrentThreadCpuTime() + millis * 1_000_000L;
        long n = 0;
        while (threads.getCurrentThreadCpuTime() < end) {
            sink += hot(n++);
            sink += warm(n);
        }
        server.close();
        acceptor.join();
        System.out.println("done " + n);
        System.out.println("cpu " + threads.getCurrentThreadCpuTime() / 1_000_000);
        System.out.println("acceptor " + acceptorEnd);
    }
}
