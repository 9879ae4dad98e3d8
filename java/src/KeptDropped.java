// Agent test program for heap=sites' fast mode: known allocations, some kept, some dropped.
//   100,000 KeptDropped$Kept, all kept live; 100,000 KeptDropped$Dropped, none kept;
//   1,000 capturing lambdas (IntSupplier), kept; 1,000 strings by concatenation, kept;
//   1,000 KeptDropped$Kept clones, kept; 10 long[3][4] (multianewarray: 10 long[][] and
//   30 long[]), kept.
// Prints a checksum line that must not change under the agent.

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;

public class KeptDropped {
    static final class Kept implements Cloneable {
        final int value;

        Kept(int value) {
            this.value = value;
        }

        Kept copy() {
            try {
                return (Kept) clone();
            } catch (CloneNotSupportedException e) {
                throw new AssertionError(e);
            }
        }
    }

    static final class Dropped {
        final long value;

        Dropped(long value) {
            this.value = value;
        }
    }

    static final List<Object> KEPT = new ArrayList<>(300_000);
    static long sink;

    static void keep() {
        for (int i = 0; i < 100_000; i++) {
            KEPT.add(new Kept(i));
        }
    }

    static void drop() {
        for (int i = 0; i < 100_000; i++) {
            Dropped d = new Dropped(i);
            sink += d.value;
        }
    }

    static void lambdas() {
        for (int i = 0; i < 1_000; i++) {
            final int n = i;
            IntSupplier s = () -> n;
            KEPT.add(s);
            sink += s.getAsInt();
        }
    }

    static void strings() {
        for (int i = 0; i < 1_000; i++) {
            String s = "item " + i + "/" + sink;
            KEPT.add(s);
        }
    }

    static void clones() {
        Kept original = new Kept(7);
        for (int i = 0; i < 1_000; i++) {
            KEPT.add(original.copy());
        }
    }

    static void matrices() {
        for (int i = 0; i < 10; i++) {
            KEPT.add(new long[3][4]);
        }
    }

    public static void main(String[] args) {
        keep();
        drop();
        lambdas();
        strings();
        clones();
        matrices();
        long sum = 0;
        for (Object o : KEPT) {
            sum += o instanceof Kept ? ((Kept) o).value : o.hashCode() == 0 ? 1 : 0;
        }
        System.out.println("kept " + KEPT.size() + " sum " + sum + " sink " + sink);
    }
}
