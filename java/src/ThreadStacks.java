// For heap dump tests: daemon threads that sit in known methods, at known lines, holding known
// local objects, until the program ends (so they are still in place at VM death).
//
//   ThreadStacks [virtual] [fill MB]
//
// - "stack-sleeper" runs sleeper() -> deeper() x4 -> sleepHolding(), which sleeps at the line
//   marked SLEEP-LINE; the Marker of kind 1 is a parameter of every deeper() and of
//   sleepHolding(), the Marker of kind 2 a local of sleepHolding() alone.
// - "stack-waiter" waits in waitOn() at the line marked WAIT-LINE, holding the Marker of kind 3.
// - "virtual": also 50 virtual threads parked in parkVirtual() and 50 that have ended but stay
//   reachable (JDK 21+, through reflection; ignored on older JDKs).
// - "fill MB": also keeps about MB megabytes of byte[1024] arrays reachable (heap pressure).
// Prints "READY <pid>" once every thread is in place, then returns when standard input closes.

import java.lang.ref.Reference;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

public class ThreadStacks {
    /** An object told apart by its kind alone. */
    static final class Marker {
        final int kind;

        Marker(int kind) {
            this.kind = kind;
        }
    }

    static final Object LOCK = new Object();
    static final CountDownLatch IN_PLACE = new CountDownLatch(2);
    static volatile boolean done;
    static final List<Object> KEEP = new ArrayList<>();

    static void sleeper() throws InterruptedException {
        deeper(new Marker(1), 3);
    }

    static void deeper(Marker held, int n) throws InterruptedException {
        if (n == 0) {
            sleepHolding(held);
        } else {
            deeper(held, n - 1);
        }
    }

    static void sleepHolding(Marker held) throws InterruptedException {
        Marker local = new Marker(2);
        IN_PLACE.countDown();
        while (!done) {
            Thread.sleep(100_000); // SLEEP-LINE
        }
        Reference.reachabilityFence(local);
        Reference.reachabilityFence(held);
    }

    static void waitOn() throws InterruptedException {
        Marker mine = new Marker(3);
        synchronized (LOCK) {
            IN_PLACE.countDown();
            while (!done) {
                LOCK.wait(); // WAIT-LINE
            }
        }
        Reference.reachabilityFence(mine);
    }

    static void parkVirtual() {
        while (!done) {
            LockSupport.park();
        }
    }

    static void startVirtual() throws Exception {
        Method start;
        try {
            start = Thread.class.getMethod("startVirtualThread", Runnable.class);
        } catch (NoSuchMethodException e) {
            return;
        }
        for (int i = 0; i < 50; i++) {
            KEEP.add(start.invoke(null, (Runnable) ThreadStacks::parkVirtual));
            Thread ended = (Thread) start.invoke(null, (Runnable) () -> KEEP.size());
            ended.join();
            KEEP.add(ended);
        }
    }

    static Thread daemon(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    public static void main(String[] args) throws Exception {
        boolean virtual = false;
        int fill = 0;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("virtual")) {
                virtual = true;
            } else if (args[i].equals("fill")) {
                fill = Integer.parseInt(args[++i]);
            }
        }
        for (int i = 0; i < fill * 1024; i++) {
            KEEP.add(new byte[1024]);
        }
        daemon("stack-sleeper", () -> {
            try {
                sleeper();
            } catch (InterruptedException e) {
                // ends the thread
            }
        });
        daemon("stack-waiter", () -> {
            try {
                waitOn();
            } catch (InterruptedException e) {
                // ends the thread
            }
        });
        IN_PLACE.await();
        if (virtual) {
            startVirtual();
        }
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        while (System.in.read() >= 0) {
            // wait for the end of input
        }
    }
}
