// Test program with one hot allocation site: for MILLIS (default 2000) milliseconds main
// allocates 1 KB byte arrays in fill() (kept in a rotating array, so they escape) and, once
// in 64 rounds, a String in name(); then prints "done".

public class AllocHot {
    static final Object[] KEEP = new Object[4096];
    static volatile Object sink;

    static void fill(int i) {
        KEEP[i & 4095] = new byte[1024];
    }

    static void name(int i) {
        sink = "n" + i;
    }

    public static void main(String[] args) {
        long millis = args.length > 0 ? Long.parseLong(args[0]) : 2000;
        long end = System.nanoTime() + millis * 1_000_000L;
        int i = 0;
        while (System.nanoTime() < end) {
            fill(i);
            if ((i & 63) == 0) {
                name(i);
            }
            i++;
        }
        System.out.println("done");
    }
}
