// Agent test program for the progress lines of long dumps: keeps N small objects live (N is
// the first argument, default 1,000; ManyLive$Cell, one site), in chunks of 1,000 arrays,
// prints "kept N sum S" and exits. A large N (tens of millions) makes the dump at exit take
// seconds; a small one, a dump too short to report its progress.

public class ManyLive {
    static final class Cell {
        final int value;

        Cell(int value) {
            this.value = value;
        }
    }

    static Cell[][] kept;

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1_000;
        kept = new Cell[(n + 999) / 1000][];
        long sum = 0;
        for (int i = 0; i < n; i++) {
            if (i % 1000 == 0) {
                kept[i / 1000] = new Cell[Math.min(1000, n - i)];
            }
            kept[i / 1000][i % 1000] = new Cell(i);
            sum += i;
        }
        System.out.println("kept " + n + " sum " + sum);
    }
}
