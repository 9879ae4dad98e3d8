// Agent test program: starts 200 short-lived threads named worker-0 .. worker-199, one after
// another, each doing a little work, then returns.

public class ManyThreads {
    public static final int THREADS = 200;
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        for (int n = 0; n < THREADS; n++) {
            Thread t = new Thread(() -> {
                for (int i = 0; i < 200_000; i++) {
                    sink += i;
                }
            }, "worker-" + n);
            t.start();
            t.join();
        }
        System.out.println("done");
    }
}
