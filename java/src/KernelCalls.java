// Agent test program for kernel frames: "syscalls" writes one byte at a time to /dev/null
// through FileOutputStream.write(int) (a write() system call each), "compute" runs a loop of
// arithmetic that makes no system call; both for SECONDS (argument 1). Each thread prints its
// own CPU time ("cpu NAME NS"), then "done".

import java.io.FileOutputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class KernelCalls {
    static volatile long sink;

    static void writeBytes(FileOutputStream out, long deadline) throws IOException {
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < 100; i++) {
                out.write(i);
            }
        }
    }

    static long compute(long deadline) {
        long x = 1;
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < 100_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        long deadline = System.nanoTime() + (long) (Double.parseDouble(args[0]) * 1e9);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long[] cpu = new long[2];
        Thread syscalls = new Thread(() -> {
            try (FileOutputStream out = new FileOutputStream("/dev/null")) {
                writeBytes(out, deadline);
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
            cpu[0] = mx.getCurrentThreadCpuTime();
        }, "syscalls");
        Thread computing = new Thread(() -> {
            sink += compute(deadline);
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
