// Agent test program for the CPU sampler's stack walk: kernels whose time goes where
// AsyncGetCallTrace gives up, each on a thread of its own that prints its CPU time at the end
// ("cpu NAME NS"), then "done". Modes (argument 1), each running until its kernel threads
// used CPU_MS milliseconds of CPU together (argument 2), or for 90 seconds at most:
//   kernels  "libm": Math.sin, cos, sqrt, log, exp and pow (the JIT's intrinsic stubs);
//            "nanotime": a loop around System.nanoTime (a leaf call into the JVM and the
//            vDSO); "plain": integer arithmetic (compiled code only);
//   jni      "jni": calls the native burn(n) of the library at the path in argument 3
//            (compiled by the test), a C loop that burns CPU;
//   stress   classes defined (Unloadable, in throw-away loaders) and dropped for the
//            collections to unload, a call site whose receivers change
//            (deoptimization), allocation and System.gc(), threads started and ended, and
//            the kernels above, all at once.

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;

public class StackWalk {
    static volatile long sink;
    static volatile double dsink;
    static volatile boolean stop;

    static double libm(double x) {
        double d = 0;
        for (int i = 1; i < 200; i++) {
            double v = x + i;
            d += Math.sin(v) + Math.cos(v) + Math.sqrt(v) + Math.log(v) + Math.exp(v * 1e-3)
                + Math.pow(v, 0.37);
        }
        return d;
    }

    static long nanotime(long x) {
        long t = 0;
        for (int i = 0; i < 200; i++) {
            t += System.nanoTime();
            x = x * 31 + (t & 7);
        }
        return x;
    }

    static long plain(long x) {
        for (int i = 0; i < 2000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= x >>> 29;
        }
        return x;
    }

    static native long burn(long n);

    static long jni(long x) {
        return burn(200_000) + x;
    }

    interface Kernel {
        void run();
    }

    static Thread kernel(String name, Kernel body, long[] cpu, int index, List<Thread> threads) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Thread t = new Thread(() -> {
            while (!stop) {
                body.run();
            }
            cpu[index] = mx.getCurrentThreadCpuTime();
        }, name);
        threads.add(t);
        return t;
    }

    static void libmLoop() {
        double x = 0;
        for (int i = 0; i < 100; i++) {
            x += libm(i * 0.25);
        }
        dsink += x;
    }

    static void nanotimeLoop() {
        long x = 1;
        for (int i = 0; i < 100; i++) {
            x = nanotime(x);
        }
        sink += x;
    }

    static void plainLoop() {
        long x = 1;
        for (int i = 0; i < 100; i++) {
            x = plain(x);
        }
        sink += x;
    }

    static void jniLoop() {
        long x = 1;
        for (int i = 0; i < 10; i++) {
            x = jni(x);
        }
        sink += x;
    }

    // --- stress: deoptimization through a call site whose receivers change over time.
    interface Shape {
        double area();
    }

    static final class Square implements Shape {
        final double s;
        Square(double s) { this.s = s; }
        public double area() { return s * s; }
    }

    static final class Circle implements Shape {
        final double r;
        Circle(double r) { this.r = r; }
        public double area() { return Math.PI * r * r; }
    }

    static final class Tri implements Shape {
        final double b;
        Tri(double b) { this.b = b; }
        public double area() { return b * b / 2; }
    }

    static double areas(Shape[] shapes) {
        double a = 0;
        for (Shape s : shapes) {
            a += s.area();
        }
        return a;
    }

    static void deoptimizer() {
        int round = 0;
        while (!stop) {
            Shape[] shapes = new Shape[1000];
            for (int i = 0; i < shapes.length; i++) {
                // Monomorphic for a while (the JIT speculates), then mixed (it deoptimizes).
                int kind = round % 3 == 0 ? 0 : i % (1 + round % 3);
                shapes[i] = kind == 0 ? new Square(i) : kind == 1 ? new Circle(i) : new Tri(i);
            }
            for (int i = 0; i < 200; i++) {
                dsink += areas(shapes);
            }
            round++;
        }
    }

    // --- stress: classes defined in throw-away loaders (unloaded by the collections).
    static byte[] unloadable() throws java.io.IOException {
        try (java.io.InputStream in = StackWalk.class.getResourceAsStream("Unloadable.class")) {
            return in.readAllBytes();
        }
    }

    static final class Loader extends ClassLoader {
        Class<?> define(byte[] bytes) {
            return defineClass("Unloadable", bytes, 0, bytes.length);
        }
    }

    static void loader() throws Exception {
        byte[] bytes = unloadable();
        while (!stop) {
            Class<?> c = new Loader().define(bytes);
            Object o = c.getDeclaredConstructor().newInstance();
            sink += o.hashCode() + c.getName().length();
        }
    }

    static void collector() throws Exception {
        while (!stop) {
            List<long[]> garbage = new ArrayList<>();
            for (int i = 0; i < 2000; i++) {
                garbage.add(new long[64]);
            }
            sink += garbage.size();
            System.gc();
            Thread.sleep(20);
        }
    }

    static void churner() throws Exception {
        while (!stop) {
            Thread t = new Thread(() -> {
                long x = 1;
                for (int i = 0; i < 20; i++) {
                    x = plain(x);
                }
                sink += x;
            }, "short-lived");
            t.start();
            t.join();
        }
    }

    static Thread loop(String name, Kernel body, List<Thread> threads) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, name);
        threads.add(t);
        return t;
    }

    interface Throwing {
        void run() throws Exception;
    }

    static Kernel unchecked(Throwing body) {
        return () -> {
            try {
                body.run();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        };
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        long cpuMillis = Long.parseLong(args[1]);
        List<Thread> threads = new ArrayList<>();
        List<String> names = new ArrayList<>();
        long[] cpu = new long[8];
        switch (mode) {
            case "kernels":
                kernel("libm", StackWalk::libmLoop, cpu, names.size(), threads);
                names.add("libm");
                kernel("nanotime", StackWalk::nanotimeLoop, cpu, names.size(), threads);
                names.add("nanotime");
                kernel("plain", StackWalk::plainLoop, cpu, names.size(), threads);
                names.add("plain");
                break;
            case "jni":
                System.load(args[2]);
                kernel("jni", StackWalk::jniLoop, cpu, names.size(), threads);
                names.add("jni");
                kernel("plain", StackWalk::plainLoop, cpu, names.size(), threads);
                names.add("plain");
                break;
            case "stress":
                kernel("libm", StackWalk::libmLoop, cpu, names.size(), threads);
                names.add("libm");
                kernel("nanotime", StackWalk::nanotimeLoop, cpu, names.size(), threads);
                names.add("nanotime");
                loop("deoptimizer", StackWalk::deoptimizer, threads);
                loop("loader", unchecked(StackWalk::loader), threads);
                loop("collector", unchecked(StackWalk::collector), threads);
                loop("churner", unchecked(StackWalk::churner), threads);
                break;
            default:
                throw new IllegalArgumentException(mode);
        }
        for (Thread t : threads) {
            t.start();
        }
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long deadline = System.nanoTime() + 90_000_000_000L;
        while (System.nanoTime() < deadline) {
            Thread.sleep(50);
            long used = 0;
            for (Thread t : threads) {
                used += Math.max(0, mx.getThreadCpuTime(t.getId()));
            }
            if (used >= cpuMillis * 1_000_000L) {
                break;
            }
        }
        stop = true;
        for (Thread t : threads) {
            t.join();
        }
        for (int i = 0; i < names.size(); i++) {
            System.out.println("cpu " + names.get(i) + " " + cpu[i]);
        }
        System.out.println("done");
    }
}
