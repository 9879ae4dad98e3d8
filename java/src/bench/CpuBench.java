// Benchmark program: a fixed amount of CPU-bound work (about 4 s on the benchmark machine) in
// a few methods, single-threaded, so a profiler's overhead shows as extra wall time.

package bench;

import java.util.HashMap;
import java.util.Map;

public class CpuBench {
    static volatile long sink;

    static long mix(long x) {
        for (int i = 0; i < 1000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= x >>> 29;
        }
        return x;
    }

    static int mapWork(int n) {
        Map<Integer, Integer> map = new HashMap<>();
        for (int i = 0; i < n; i++) {
            map.merge(i % 1000, i, Integer::sum);
        }
        return map.size();
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 2500;
        long start = System.nanoTime();
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < 1000; k++) {
                sink += mix(k + r);
            }
            sink += mapWork(2000);
        }
        System.out.println("CpuBench " + rounds + " rounds in " + (System.nanoTime() - start) / 1_000_000 + " ms");
    }
}
