// Agent test program: allocations made by methods that HotSpot's JIT replaces by intrinsics
// once the calling loop is compiled (C2), with known counts. Each loop runs N times (the
// first argument, 300000 by default: long enough for C2 to compile it) and keeps its last
// 1024 objects in a ring, so escape analysis cannot remove an allocation:
//   copyObjects:   N CompiledAllocs$Item[] of length 3 by Arrays.copyOf(Item[], 3)
//                  (the Array.newInstance path of Arrays.copyOf), and N Object[] of length 3
//                  by Arrays.copyOfRange(Object[], 1, 4) (its `new Object[]` path)
//   concatenate:   2N java.lang.String and 2N byte[] by "<" + i + ">" and
//                  "(" + i + "," + (n - i) + ")" (two concatenation sites: on JDK 23+ one
//                  argument and two take different paths)
//   newInstance:   N CompiledAllocs$Mark[] of length 2 by Array.newInstance(Mark.class, 2)
//   cloneObjects:  N CompiledAllocs$Cell by Cell.clone() (Object.clone) and N
//                  CompiledAllocs$Cell[] of length 4 by an array's clone()
//   allocateInstance: N CompiledAllocs$Bare by Unsafe.allocateInstance (sun.misc.Unsafe,
//                  through reflection)
//   builders:      N java.lang.String by StringBuilder.toString() of "[" + i (no indy: an
//                  explicit StringBuilder)
//   utf16:         N java.lang.String by new String(char[]) of 3 non-Latin-1 chars, whose
//                  UTF-16 byte[] (6 bytes) StringUTF16.toBytes makes
// Then it prints "done <checksum>".

import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Arrays;

public class CompiledAllocs {
    static final class Item {
        final int v;

        Item(int v) {
            this.v = v;
        }
    }

    static final class Mark {}

    static final class Bare {
        int v;
    }

    static final class Cell implements Cloneable {
        int v;

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

    static void keep(int i, Object o) {
        RING[i & 1023] = o;
    }

    static void copyObjects(int n) {
        Item[] items = {new Item(1), new Item(2), new Item(3), new Item(4)};
        Object[] objects = {items[0], items[1], items[2], items[3], "x"};
        for (int i = 0; i < n; i++) {
            Item[] copy = Arrays.copyOf(items, 3);
            keep(i, copy);
            Object[] range = Arrays.copyOfRange(objects, 1, 4);
            keep(i + 512, range);
            checksum += copy.length + range.length;
        }
    }

    static void concatenate(int n) {
        for (int i = 0; i < n; i++) {
            String s = "<" + i + ">";
            keep(i, s);
            String t = "(" + i + "," + (n - i) + ")";
            keep(i + 512, t);
            checksum += s.length() + t.length();
        }
    }

    static void builders(int n) {
        for (int i = 0; i < n; i++) {
            StringBuilder b = new StringBuilder(16);
            String s = b.append('[').append(i).toString();
            keep(i, s);
            checksum += s.length();
        }
    }

    static void utf16(int n) {
        char[] chars = {'\u03b1', '\u03b2', 'x'};
        for (int i = 0; i < n; i++) {
            chars[2] = (char) ('a' + (i & 15));
            String s = new String(chars);
            keep(i, s);
            checksum += s.length();
        }
    }

    static void newInstance(int n) {
        for (int i = 0; i < n; i++) {
            Object a = Array.newInstance(Mark.class, 2);
            keep(i, a);
            checksum += Array.getLength(a);
        }
    }

    static void cloneObjects(int n) {
        Cell cell = new Cell();
        Cell[] cells = new Cell[4];
        for (int i = 0; i < n; i++) {
            cell.v = i;
            Cell c = cell.clone();
            keep(i, c);
            Cell[] a = cells.clone();
            keep(i + 512, a);
            checksum += c.v + a.length;
        }
    }

    static void allocateInstance(int n) throws Exception {
        Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
        Field f = unsafeClass.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        Object unsafe = f.get(null);
        Method allocate = unsafeClass.getMethod("allocateInstance", Class.class);
        // A method handle would be inlined like a direct call; reflection is enough to show
        // the count, and Unsafe.allocateInstance is what is under test.
        java.lang.invoke.MethodHandle mh =
                java.lang.invoke.MethodHandles.lookup().unreflect(allocate).bindTo(unsafe);
        for (int i = 0; i < n; i++) {
            Object o;
            try {
                o = (Object) mh.invoke(Bare.class);
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
            keep(i, o);
            checksum += ((Bare) o).v;
        }
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 300_000;
        copyObjects(n);
        concatenate(n);
        builders(n);
        utf16(n);
        newInstance(n);
        cloneObjects(n);
        allocateInstance(n);
        Arrays.fill(RING, null);
        System.out.println("done " + checksum);
    }
}
