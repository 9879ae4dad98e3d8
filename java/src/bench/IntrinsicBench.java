// Benchmark program: allocations HotSpot's JIT makes through intrinsics once compiled
// (Object.clone, Arrays.copyOf of object arrays, Array.newInstance, string concatenation,
// capturing lambdas, Constructor.newInstance), single-threaded. Argument: the work to do,
// one of clone, copyOf, newInstance, concat, lambda, reflect, all (the default), and the
// iterations of each (default 2,000,000). Prints the nanoseconds per iteration of each.

package bench;

import java.lang.reflect.Array;
import java.lang.reflect.Constructor;
import java.util.Arrays;
import java.util.function.IntSupplier;

public class IntrinsicBench {
    static final class Cell implements Cloneable {
        int v;

        Cell(int v) {
            this.v = v;
        }

        @Override
        public Cell clone() {
            try {
                return (Cell) super.clone();
            } catch (CloneNotSupportedException e) {
                throw new AssertionError(e);
            }
        }
    }

    static final Object[] RING = new Object[1024];
    static long checksum;

    static long clone(int n) {
        Cell cell = new Cell(1);
        int[] ints = new int[8];
        long sum = 0;
        for (int i = 0; i < n; i++) {
            Cell c = cell.clone();
            int[] a = ints.clone();
            RING[i & 1023] = c;
            RING[(i + 512) & 1023] = a;
            sum += c.v + a.length;
        }
        return sum;
    }

    static long copyOf(int n) {
        String[] strings = {"a", "b", "c", "d"};
        Object[] objects = {"a", "b", "c", "d"};
        long sum = 0;
        for (int i = 0; i < n; i++) {
            String[] s = Arrays.copyOf(strings, 6);
            Object[] o = Arrays.copyOfRange(objects, 1, 3);
            RING[i & 1023] = s;
            RING[(i + 512) & 1023] = o;
            sum += s.length + o.length;
        }
        return sum;
    }

    static long newInstance(int n) {
        long sum = 0;
        for (int i = 0; i < n; i++) {
            Object a = Array.newInstance(Cell.class, 3);
            RING[i & 1023] = a;
            sum += Array.getLength(a);
        }
        return sum;
    }

    static long concat(int n) {
        long sum = 0;
        for (int i = 0; i < n; i++) {
            String s = "k" + i + "=" + (i & 15);
            RING[i & 1023] = s;
            sum += s.length();
        }
        return sum;
    }

    static long lambda(int n) {
        long sum = 0;
        for (int i = 0; i < n; i++) {
            final int k = i;
            IntSupplier f = () -> k + 1;
            RING[i & 1023] = f;
            sum += f.getAsInt();
        }
        return sum;
    }

    static long reflect(int n) throws Exception {
        Constructor<Cell> c = Cell.class.getDeclaredConstructor(int.class);
        long sum = 0;
        for (int i = 0; i < n; i++) {
            Cell cell = c.newInstance(i);
            RING[i & 1023] = cell;
            sum += cell.v;
        }
        return sum;
    }

    public static void main(String[] args) throws Exception {
        String what = args.length > 0 ? args[0] : "all";
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 2_000_000;
        String[] all = {"clone", "copyOf", "newInstance", "concat", "lambda", "reflect"};
        StringBuilder out = new StringBuilder();
        for (String w : what.equals("all") ? all : new String[] {what}) {
            long start = System.nanoTime();
            switch (w) {
                case "clone": checksum += clone(n); break;
                case "copyOf": checksum += copyOf(n); break;
                case "newInstance": checksum += newInstance(n); break;
                case "concat": checksum += concat(n); break;
                case "lambda": checksum += lambda(n); break;
                case "reflect": checksum += reflect(n); break;
                default: throw new IllegalArgumentException(w);
            }
            out.append(w).append(' ').append((System.nanoTime() - start) / n).append(" ns/op\n");
        }
        System.out.print(out);
        System.out.println("checksum " + checksum);
    }
}
