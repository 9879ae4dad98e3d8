// Agent test program for heap=sites' live estimate: one class (LiveSets$Cell) and one array
// class (int[]) allocated at several sites, each site keeping a known share of what it
// allocates, drawn at random with a fixed seed, interleaved in one loop.
//   cellAll   keeps every Cell it makes     cellNone  keeps none
//   cellThird keeps about one in three      cellHalf  keeps about one in two
//   ints16    int[16], keeps about a quarter
//   intsAny   int[0..255], keeps about a fifth
// Prints, for each site, "site NAME LINE allocated kept keptLengths keptOdd" (keptLengths: the
// sum of the kept arrays' lengths, keptOdd: how many have an odd length; 0 for Cells), then
// "done".
// Argument: the rounds (default 200,000).

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

public class LiveSets {
    static final class Cell {
        final int a;
        int b;

        Cell(int a) {
            this.a = a;
        }
    }

    static final List<Object> KEPT = new ArrayList<>();
    static long sink;

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        Random random = new Random(42);
        long third = 0;
        long half = 0;
        long quarter = 0;
        long fifth = 0;
        long fifthLengths = 0;
        long fifthOdd = 0;
        int lineAll = 0;
        int lineNone = 0;
        int lineThird = 0;
        int lineHalf = 0;
        int line16 = 0;
        int lineAny = 0;
        for (int i = 0; i < rounds; i++) {
            Cell all = new Cell(i); if (i == 0) lineAll = line();
            KEPT.add(all);
            Cell none = new Cell(i); if (i == 0) lineNone = line();
            sink += none.a;
            Cell t = new Cell(i); if (i == 0) lineThird = line();
            if (random.nextInt(3) == 0) {
                KEPT.add(t);
                third++;
            }
            Cell h = new Cell(i); if (i == 0) lineHalf = line();
            if (random.nextBoolean()) {
                KEPT.add(h);
                half++;
            }
            int[] q = new int[16]; if (i == 0) line16 = line();
            if (random.nextInt(4) == 0) {
                KEPT.add(q);
                quarter++;
            }
            int length = random.nextInt(256);
            int[] f = new int[length]; if (i == 0) lineAny = line();
            if (random.nextInt(5) == 0) {
                KEPT.add(f);
                fifth++;
                fifthLengths += length;
                fifthOdd += length % 2;
            }
        }
        System.out.println("site cellAll " + lineAll + " " + rounds + " " + rounds + " 0 0");
        System.out.println("site cellNone " + lineNone + " " + rounds + " 0 0 0");
        System.out.println("site cellThird " + lineThird + " " + rounds + " " + third + " 0 0");
        System.out.println("site cellHalf " + lineHalf + " " + rounds + " " + half + " 0 0");
        System.out.println(
                "site ints16 " + line16 + " " + rounds + " " + quarter + " " + 16 * quarter + " 0");
        System.out.println("site intsAny " + lineAny + " " + rounds + " " + fifth + " "
                + fifthLengths + " " + fifthOdd);
        System.out.println("done " + KEPT.size() + " " + sink);
    }

    /** The caller's line. */
    static int line() {
        return new Throwable().getStackTrace()[1].getLineNumber();
    }
}
