// Agent test program with known allocations per site, for heap=sites. Every object escapes
// (stored in static arrays) so the JIT cannot eliminate an allocation. Counts:
//   makePoints:     10000 AllocSites$Point, 2500 of them kept live
//   makeArrays:     one site per primitive array type, 700 arrays each, length 16, none kept
//   makeObjArrays:  300 AllocSites$Point[] of length 5, kept
//   makeMatrix:     40 int[][] (3 x 4): 40 int[][] and 120 int[], all kept
//   makeClones:     600 AllocSites$Point by clone(), kept
//   makeReflective: 200 AllocSites$Point by Constructor.newInstance and 200 long[] by
//                   Array.newInstance (length 8), kept
//   makeInThreads:  4 threads ("allocator-0".."allocator-3"), 1000 AllocSites$Box each, kept
//   makeStrings:    500 java.lang.String by string concatenation, kept
// Then the program prints "READY <pid>" and waits for a line on stdin (for SIGQUIT dumps)
// when run with the argument "wait"; otherwise it returns.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Array;

public class AllocSites {
    static final class Point implements Cloneable {
        final int x;
        final int y;

        Point(int x, int y) {
            this.x = x;
            this.y = y;
        }

        Point() {
            this(0, 0);
        }

        @Override
        public Point clone() {
            try {
                return (Point) super.clone();
            } catch (CloneNotSupportedException e) {
                throw new AssertionError(e);
            }
        }
    }

    static final class Box {
        final long value;

        Box(long value) {
            this.value = value;
        }
    }

    static Object[] kept = new Object[20000];
    static Object[] scratch = new Object[10000];
    static int keptCount;

    static void keep(Object o) {
        kept[keptCount++] = o;
    }

    static void makePoints() {
        for (int i = 0; i < 10000; i++) {
            Point p = new Point(i, -i);
            if (i % 4 == 0) {
                keep(p);
            } else {
                scratch[i] = p;
            }
        }
        scratch = new Object[10000];
    }

    static void makeArrays() {
        Object[] temp = new Object[700 * 8];
        int n = 0;
        for (int i = 0; i < 700; i++) {
            temp[n++] = new boolean[16];
            temp[n++] = new char[16];
            temp[n++] = new float[16];
            temp[n++] = new double[16];
            temp[n++] = new byte[16];
            temp[n++] = new short[16];
            temp[n++] = new int[16];
            temp[n++] = new long[16];
        }
        scratch[0] = temp;
    }

    static void makeObjArrays() {
        for (int i = 0; i < 300; i++) {
            keep(new Point[5]);
        }
    }

    static void makeMatrix() {
        for (int i = 0; i < 40; i++) {
            keep(new int[3][4]);
        }
    }

    static void makeClones(Point original) {
        for (int i = 0; i < 600; i++) {
            keep(original.clone());
        }
    }

    static void makeReflective() throws Exception {
        java.lang.reflect.Constructor<Point> constructor = Point.class.getDeclaredConstructor();
        for (int i = 0; i < 200; i++) {
            keep(constructor.newInstance());
            keep(Array.newInstance(long.class, 8));
        }
    }

    static void makeInThreads() throws Exception {
        Thread[] threads = new Thread[4];
        Box[][] boxes = new Box[4][1000];
        for (int t = 0; t < 4; t++) {
            final int id = t;
            threads[t] = new Thread(() -> {
                for (int i = 0; i < 1000; i++) {
                    boxes[id][i] = new Box(i);
                }
            }, "allocator-" + t);
        }
        for (Thread t : threads) {
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        keep(boxes);
    }

    static void makeStrings() {
        for (int i = 0; i < 500; i++) {
            keep("s" + i + "!");
        }
    }

    public static void main(String[] args) throws Exception {
        makePoints();
        makeArrays();
        makeObjArrays();
        makeMatrix();
        makeClones(new Point(1, 2));
        makeReflective();
        makeInThreads();
        makeStrings();
        scratch = null;
        if (args.length > 0 && args[0].equals("wait")) {
            System.out.println("READY " + ProcessHandle.current().pid());
            System.out.flush();
            new BufferedReader(new InputStreamReader(System.in)).readLine();
        }
        System.out.println("kept " + keptCount);
    }
}
