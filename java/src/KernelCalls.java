// Agent test program for kernel frames: "syscalls" writes one byte at a time to /dev/null
// through FileOutputStream.write(int) (a write() system call each), "compute" runs a loop of
// arithmetic that makes no system call but the reading of its CPU time every ~5 ms; each until
// it has used SECONDS (argument 1) of its own CPU time, so that a busy machine changes how long
// the run takes, not how much each thread does (at most a minute of wall time, then they stop
// wherever they are). Each thread prints its own CPU time ("cpu NAME NS"), then "done".

import java.io.FileOutputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class KernelCalls {
    static volatile long sink;

    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    /** Whether the calling thread has used less than `cpuNanos` of CPU time, before `deadline`. */
    static boolean more(long cpuNanos, long deadline) {
        return MX.getCurrentThreadCpuTime() < cpuNanos && System.nanoTime() < deadline;
    }

    static void writeBytes(FileOutputStream out, long cpuNanos, long deadline) throws IOException {
        while (more(cpuNanos, deadline)) {
            for (int i = 0; i < 100; i++) {
                out.write(i);
            }
        }
    }

    static long compute(long cpuNanos, long deadline) {
        long x = 1;
        // Its CPU time is read (a clock_gettime system call) every ~5 ms of arithmetic: read
        // every 0.1 ms, the reads were 2-5 % of its samples, in the kernel.
        while (more(cpuNanos, deadline)) {
            for (int i = 0; i < 5_000_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        long cpuNanos = (long) (Double.parseDouble(args[0]) * 1e9);
        long deadline = System.nanoTime() + 60_000_000_000L;
        ThreadMXBean mx = MX;
        long[] cpu = new long[2];
        Thread syscalls = new Thread(() -> {
            try (FileOutputStream out = new FileOutputStream("/dev/null")) {
                writeBytes(out, cpuNanos, deadline);
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
            cpu[0] = mx.getCurrentThreadCpuTime();
        }, "syscalls");
        Thread computing = new Thread(() -> {
            sink += compute(cpuNanos, deadline);
            cpu[1] = mx.getCurrentThreadCpuTime();
        }, "compute");
        syscalls.start();
        computing.start();
        syscalls.join();
        computing.join();
        System.out.println("cpu syscalls " + cpu[0]);
        System.out.println("cpu compute " + cpu[1]);
        System.out.println("done");
    }
}
