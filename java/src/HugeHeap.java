// Test program for heap dumps over 4 GB: keeps 600 long[1,000,000] arrays (8 MB each, about
// 4.8 GB) reachable, each filled with a known pattern, prints "READY <pid>" and waits until its
// standard input closes. Needs -Xmx6g or more.

public class HugeHeap {
    public static final int ARRAYS = 600;
    public static final int LENGTH = 1_000_000;

    static long[][] keep;

    public static void main(String[] args) throws Exception {
        keep = new long[ARRAYS][];
        for (int i = 0; i < ARRAYS; i++) {
            long[] a = new long[LENGTH];
            a[0] = i;
            a[LENGTH - 1] = -i;
            keep[i] = a;
        }
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        while (System.in.read() >= 0) {
            // Wait for the test to close our standard input.
        }
    }
}
