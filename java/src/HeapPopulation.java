// A program with a known, fixed object population, for heap dump tests: it builds the objects
// below, keeps them reachable, prints "READY <pid>" and waits until its standard input closes.

import java.util.ArrayList;
import java.util.List;

public class HeapPopulation {
    // The population. Tests assert these exact counts.
    public static final int NODES = 12345;
    public static final int LEAVES = 678;
    public static final int INT_ARRAYS = 100; // int[10] each
    public static final int NODE_ARRAYS = 50; // HeapPopulation$Node[7] each, 3 slots filled
    public static final int LONG_MATRICES = 3; // long[4][5] each: 3 long[][] and 12 long[]
    public static final int EMPTY_MARKERS = 9;

    /** A node with one field of every primitive type and two references. */
    static final class Node {
        boolean flag;
        byte b;
        char c;
        short s;
        int i;
        long l;
        float f;
        double d;
        Node next;
        Leaf leaf;

        Node(int n, Node next) {
            this.flag = (n & 1) == 1;
            this.b = (byte) n;
            this.c = (char) ('A' + n % 26);
            this.s = (short) (n * 3);
            this.i = n;
            this.l = n * 1_000_000_007L;
            this.f = n / 2.0f;
            this.d = n / 4.0;
            this.next = next;
        }
    }

    /** A leaf holding a String and an int. */
    static final class Leaf {
        final String label;
        final int weight;

        Leaf(String label, int weight) {
            this.label = label;
            this.weight = weight;
        }
    }

    /** A class with no fields at all. */
    static final class EmptyMarker {}

    /** A subclass adding a field to a superclass with fields. */
    static class Base {
        int baseValue = 7;
        Object baseRef = "base";
    }

    static final class Derived extends Base {
        long derivedValue = 42L;
    }

    public static final int DERIVED = 4;

    static Object keep;
    static int staticInt = 123456;
    static String staticString = "hello, heap";

    public static void main(String[] args) throws Exception {
        List<Object> roots = new ArrayList<>();
        Leaf[] leaves = new Leaf[LEAVES];
        for (int n = 0; n < LEAVES; n++) {
            leaves[n] = new Leaf("leaf-" + n, n);
        }
        roots.add(leaves);
        Node head = null;
        for (int n = 0; n < NODES; n++) {
            head = new Node(n, head);
            head.leaf = leaves[n % LEAVES];
        }
        roots.add(head);
        for (int n = 0; n < INT_ARRAYS; n++) {
            int[] a = new int[10];
            a[0] = n;
            roots.add(a);
        }
        Node walk = head;
        for (int n = 0; n < NODE_ARRAYS; n++) {
            Node[] array = new Node[7];
            for (int k = 0; k < 3; k++) {
                array[k] = walk;
                walk = walk.next;
            }
            roots.add(array);
        }
        for (int n = 0; n < LONG_MATRICES; n++) {
            roots.add(new long[4][5]);
        }
        for (int n = 0; n < EMPTY_MARKERS; n++) {
            roots.add(new EmptyMarker());
        }
        for (int n = 0; n < DERIVED; n++) {
            roots.add(new Derived());
        }
        keep = roots;
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        while (System.in.read() >= 0) {
            // Wait for the test to close our standard input.
        }
        if (keep == null) {
            throw new AssertionError("unreachable");
        }
    }
}
