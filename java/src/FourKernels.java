// Agent test and benchmark program for CPU-share accuracy: four threads, each running one
// kernel until the deadline (SECONDS, argument 1), each kernel's frame holding everything its
// thread does, so a thread's CPU time is its kernel's:
//   math     integer arithmetic in 1 ms bursts between 5 ms sleeps, reading System.nanoTime
//            after every slice of about 0.2 us (bursts shorter than the kernel's tick, and a
//            leaf call into the vDSO at every step);
//   sort     sorting arrays of 2,000 random ints;
//   hashmap  HashMap puts, gets and removes of boxed keys (allocation, so garbage collection);
//   trig     Math.sin, Math.cos and Math.sqrt (HotSpot's intrinsic stubs).
// Each thread prints its own CPU time ("kernel NAME CPU_NS"), then the program prints "done".

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Random;

public class FourKernels {
    static volatile long sink;

    static void kernelMath(long deadline) throws InterruptedException {
        long x = 1;
        while (System.nanoTime() < deadline) {
            long end = System.nanoTime() + 1_000_000L;
            while (System.nanoTime() < end) {
                for (int i = 0; i < 64; i++) {
                    x = x * 6364136223846793005L + 1442695040888963407L;
                    x ^= x >>> 29;
                }
            }
            Thread.sleep(5);
        }
        sink += x;
    }

    static void kernelSort(long deadline) {
        Random random = new Random(42);
        int[] data = new int[2_000];
        long checksum = 0;
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < data.length; i++) {
                data[i] = random.nextInt();
            }
            Arrays.sort(data);
            checksum += data[data.length / 2];
        }
        sink += checksum;
    }

    static void kernelHashMap(long deadline) {
        HashMap<Integer, Integer> map = new HashMap<>();
        int key = 0;
        long checksum = 0;
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < 1_000; i++) {
                key = key * 1103515245 + 12345;
                int k = (key >>> 8) & 0xFFFF;
                map.put(k, i);
                Integer v = map.get((k * 31) & 0xFFFF);
                if (v != null) {
                    checksum += v;
                }
                if ((i & 3) == 0) {
                    map.remove((k * 17) & 0xFFFF);
                }
            }
        }
        sink += checksum + map.size();
    }

    static void kernelTrig(long deadline) {
        double d = 0;
        double a = 0.5;
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < 1_000; i++) {
                a += 0.001;
                d += Math.sin(a) * Math.cos(a * 0.7) + Math.sqrt(a + d * d);
            }
            if (d > 1e12) {
                d = 0;
            }
        }
        sink += (long) d;
    }

    interface Kernel {
        void run(long deadline) throws InterruptedException;
    }

    public static void main(String[] args) throws Exception {
        long deadline = System.nanoTime() + (long) (Double.parseDouble(args[0]) * 1e9);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        String[] names = {"math", "sort", "hashmap", "trig"};
        Kernel[] kernels = {
            FourKernels::kernelMath, FourKernels::kernelSort, FourKernels::kernelHashMap,
            FourKernels::kernelTrig
        };
        long[] cpu = new long[4];
        Thread[] threads = new Thread[4];
        for (int i = 0; i < 4; i++) {
            int index = i;
            threads[i] = new Thread(() -> {
                try {
                    kernels[index].run(deadline);
                } catch (InterruptedException e) {
                    return;
                }
                cpu[index] = mx.getCurrentThreadCpuTime();
            }, names[i]);
        }
        for (Thread t : threads) {
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        for (int i = 0; i < 4; i++) {
            System.out.println("kernel " + names[i] + " " + cpu[i]);
        }
        System.out.println("done");
    }
}
