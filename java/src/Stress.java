// Stress test program: runs for the given milliseconds under a chosen mix of loads, then prints
// "done" and returns. Arguments: MILLIS then any of
//   alloc    three threads allocating, keeping a rotating set of objects live
//   locks    four threads contending for one monitor, with wait/notify
//   churn    a thread starting short-lived threads one after another
//   vthreads many virtual threads (JDK 21+, through reflection; ignored on older JDKs)
//   unload   classes defined in throw-away loaders and unloaded
//   cpu      a CPU-bound thread
//   oom      fills the heap and keeps it full until an OutOfMemoryError ends main
//   oom-keep fills the heap, keeps it full from a static, and goes on allocating (other threads
//            too, catching their OutOfMemoryErrors) until main dies of one after MILLIS
//   oom-static fills the heap from a static until main dies of an OutOfMemoryError, leaving
//            no garbage: the JVM then cannot even start its shutdown
// Every load thread is a daemon and stops at the deadline.

import java.io.InputStream;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

public class Stress {
    static volatile boolean stop;
    static final AtomicLong work = new AtomicLong();
    static final Object LOCK = new Object();
    static volatile Object sink;

    static Thread daemon(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    static void alloc() {
        Object[] keep = new Object[4096];
        int i = 0;
        while (!stop) {
            keep[i++ & 4095] = new byte[64 + (i & 255)];
            sink = new StringBuilder().append(i).toString();
            sink = new int[i & 63];
            work.incrementAndGet();
        }
    }

    static void locks() {
        while (!stop) {
            synchronized (LOCK) {
                work.incrementAndGet();
                if ((work.get() & 127) == 0) {
                    try {
                        LOCK.wait(1);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                LOCK.notifyAll();
            }
        }
    }

    static void churn() {
        while (!stop) {
            Thread t = new Thread(() -> work.incrementAndGet(), "churn");
            t.start();
            try {
                t.join();
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    static void vthreads() {
        Method ofVirtual;
        try {
            ofVirtual = Thread.class.getMethod("startVirtualThread", Runnable.class);
        } catch (NoSuchMethodException e) {
            return;
        }
        List<Thread> batch = new ArrayList<>();
        while (!stop) {
            try {
                for (int i = 0; i < 2000; i++) {
                    batch.add((Thread) ofVirtual.invoke(null, (Runnable) () -> {
                        sink = new byte[128];
                        try {
                            Thread.sleep(1);
                        } catch (InterruptedException e) {
                            return;
                        }
                        work.incrementAndGet();
                    }));
                }
                for (Thread t : batch) {
                    t.join();
                }
                batch.clear();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }
    }

    static final class OneClassLoader extends ClassLoader {
        OneClassLoader() {
            super(Stress.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.equals("Unloadable")) {
                return super.loadClass(name, resolve);
            }
            try (InputStream in = getParent().getResourceAsStream("Unloadable.class")) {
                byte[] bytes = in.readAllBytes();
                return defineClass(name, bytes, 0, bytes.length);
            } catch (java.io.IOException e) {
                throw new ClassNotFoundException(name, e);
            }
        }
    }

    static void unload() {
        while (!stop) {
            try {
                sink = new OneClassLoader().loadClass("Unloadable").getDeclaredConstructor().newInstance();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            sink = null;
            work.incrementAndGet();
            if ((work.get() & 63) == 0) {
                System.gc();
            }
        }
    }

    static void cpu() {
        long x = 0;
        while (!stop) {
            for (int i = 0; i < 100_000; i++) {
                x += i * 31L ^ (x >>> 7);
            }
            work.incrementAndGet();
        }
        sink = x;
    }

    static final List<long[]> HOG = new ArrayList<>();

    static void oomKeep(long millis) {
        Runnable churn = () -> {
            while (!stop) {
                try {
                    sink = new long[1024];
                } catch (OutOfMemoryError e) {
                    work.incrementAndGet();
                }
            }
        };
        for (int i = 0; i < 2; i++) daemon("oom-churn-" + i, churn);
        long end = System.nanoTime() + millis * 1_000_000L;
        while (System.nanoTime() < end) {
            try {
                HOG.add(new long[16 * 1024]);
            } catch (OutOfMemoryError e) {
                work.incrementAndGet();
            }
        }
        while (true) {
            HOG.add(new long[16 * 1024]);
        }
    }

    static void oom() {
        List<long[]> hog = new ArrayList<>();
        while (true) {
            hog.add(new long[16 * 1024]);
        }
    }

    public static void main(String[] args) throws Exception {
        long millis = Long.parseLong(args[0]);
        for (int a = 1; a < args.length; a++) {
            switch (args[a]) {
                case "alloc":
                    for (int i = 0; i < 3; i++) daemon("alloc-" + i, Stress::alloc);
                    break;
                case "locks":
                    for (int i = 0; i < 4; i++) daemon("locks-" + i, Stress::locks);
                    break;
                case "churn":
                    daemon("churn", Stress::churn);
                    break;
                case "vthreads":
                    daemon("vthreads", Stress::vthreads);
                    break;
                case "unload":
                    daemon("unload", Stress::unload);
                    break;
                case "cpu":
                    daemon("cpu", Stress::cpu);
                    break;
                case "oom-static":
                    System.out.println("READY");
                    System.out.flush();
                    while (true) {
                        HOG.add(new long[16 * 1024]);
                    }
                case "oom-keep":
                    System.out.println("READY");
                    System.out.flush();
                    oomKeep(millis);
                    break;
                case "oom":
                    System.out.println("READY");
                    System.out.flush();
                    oom();
                    break;
                default:
                    throw new IllegalArgumentException(args[a]);
            }
        }
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(millis);
        stop = true;
        System.out.println("done " + (work.get() > 0));
    }
}
