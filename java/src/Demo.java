// The bundled demo program `hprof run` profiles when given no program (through Java's
// source launcher): about two seconds of work in a few methods of different cost, so the
// profile has a clear winner.

import java.util.ArrayList;
import java.util.List;

public class Demo {
    static volatile long sink;

    /** Counts primes below n by trial division: the expensive part. */
    static int countPrimes(int n) {
        int count = 0;
        for (int candidate = 2; candidate < n; candidate++) {
            boolean prime = true;
            for (int d = 2; (long) d * d <= candidate; d++) {
                if (candidate % d == 0) {
                    prime = false;
                    break;
                }
            }
            if (prime) {
                count++;
            }
        }
        return count;
    }

    /** Builds and sorts strings: a cheaper part that allocates. */
    static int shuffleWords(int n) {
        List<String> words = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            words.add(Integer.toString(i * 7919 % n, 36));
        }
        words.sort(null);
        return words.size();
    }

    public static void main(String[] args) {
        long end = System.nanoTime() + 2_000_000_000L;
        int rounds = 0;
        while (System.nanoTime() < end) {
            sink += countPrimes(150_000);
            sink += shuffleWords(5_000);
            rounds++;
        }
        System.out.println("Demo: " + rounds + " rounds");
    }
}
