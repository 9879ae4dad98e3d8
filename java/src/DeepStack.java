// Agent test program for deep stacks: a thread ("deep", with a 512 MB stack) recurses DEPTH
// frames deep (argument 1) through down() and computes in spin() at the bottom for SECONDS
// (argument 2); then prints "done".

public class DeepStack {
    static volatile long sink;
    static long deadline;

    static long spin() {
        long x = 1;
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < 10_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        }
        return x;
    }

    static long down(int n) {
        if (n == 0) {
            return spin();
        }
        return down(n - 1) + 1;
    }

    public static void main(String[] args) throws Exception {
        int depth = Integer.parseInt(args[0]);
        deadline = System.nanoTime() + (long) (Double.parseDouble(args[1]) * 1e9);
        Thread deep = new Thread(null, () -> sink += down(depth), "deep", 512L << 20);
        deep.start();
        deep.join();
        System.out.println("done");
    }
}
