// Benchmark program: allocation-heavy work (objects, Strings, arrays; most short-lived, some
// kept) for a fixed number of rounds, single-threaded.

package bench;

import java.util.ArrayList;
import java.util.List;

public class AllocBench {
    static final class Node {
        final int id;
        final Node next;
        final String label;

        Node(int id, Node next, String label) {
            this.id = id;
            this.next = next;
            this.label = label;
        }
    }

    static volatile Object sink;
    static final List<Object> kept = new ArrayList<>();

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        long start = System.nanoTime();
        for (int r = 0; r < rounds; r++) {
            Node head = null;
            for (int i = 0; i < 10_000; i++) {
                head = new Node(i, (i & 7) == 0 ? null : head, (i & 63) == 0 ? "n" + i : null);
            }
            int[] numbers = new int[1000 + r % 100];
            byte[] bytes = new byte[4096];
            sink = head;
            sink = numbers;
            sink = bytes;
            if (r % 10 == 0) {
                kept.add(head);
            }
        }
        System.out.println("AllocBench " + rounds + " rounds in " + (System.nanoTime() - start) / 1_000_000 + " ms, kept " + kept.size());
    }
}
