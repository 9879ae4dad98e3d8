// Agent test program with known monitor behaviour, for monitor=y:
//   phase 1: 4 threads (worker-0..3) each enter LockContention$Lock 20 times, every time
//            while main holds it: 80 contended enters, each waiting 5 ms or more;
//   phase 2: thread "consumer" waits on LockContention$Mailbox exactly 10 times, each wait
//            ended by one notify from "producer" (a handshake makes every wait real);
//   with the argument "hold": thread "holder" then holds the Lock while "blocked-1" and
//            "blocked-2" try to enter it; the program prints "READY <pid>", and when a line
//            arrives on stdin the holder lets go and the program ends.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.CountDownLatch;

public class LockContention {
    static final class Lock {}

    static final class Mailbox {
        int delivered;
        int taken;
    }

    static final Lock LOCK = new Lock();
    static final Mailbox MAILBOX = new Mailbox();
    public static final int WAITS = 10;
    static final int WORKERS = 4;
    static final int ENTERS_PER_WORKER = 20;

    /** The round whose worker may now try to enter LOCK (phase 1). */
    static volatile int turn = -1;
    /** How many rounds' workers have entered LOCK (phase 1). */
    static volatile int entered;

    /**
     * Phase 1, with a known count: 80 rounds; in each, the main thread holds LOCK, lets one
     * worker (in turn) try to enter it, waits until that worker is BLOCKED on it, and holds it
     * 5 ms more. So every one of the 80 enters is contended and waits at least 5 ms, whatever
     * the scheduler does (free-running workers would re-take the lock they just let go, and
     * the number of contended enters would be up to chance). The threads wait for their turns
     * by sleeping 1 ms at a time, not by parking, so that the only contention and the only
     * parking a profiler sees is on LOCK (JFR counts parks with monitor enters).
     */
    static void contend() throws InterruptedException {
        Thread[] workers = new Thread[WORKERS];
        for (int t = 0; t < workers.length; t++) {
            int first = t;
            workers[t] = new Thread(() -> {
                for (int round = first; round < WORKERS * ENTERS_PER_WORKER; round += WORKERS) {
                    while (turn != round) {
                        pause();
                    }
                    synchronized (LOCK) {
                        entered = round + 1;
                    }
                }
            }, "worker-" + t);
        }
        for (Thread w : workers) {
            w.start();
        }
        for (int round = 0; round < WORKERS * ENTERS_PER_WORKER; round++) {
            Thread worker = workers[round % WORKERS];
            synchronized (LOCK) {
                turn = round;
                while (worker.getState() != Thread.State.BLOCKED) {
                    Thread.yield();
                }
                Thread.sleep(5);
            }
            while (entered != round + 1) {
                pause();
            }
        }
        for (Thread w : workers) {
            w.join();
        }
    }

    static void pause() {
        try {
            Thread.sleep(1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void waitAndNotify() throws InterruptedException {
        Thread consumer = new Thread(() -> {
            synchronized (MAILBOX) {
                for (int i = 0; i < WAITS; i++) {
                    // Each wait ends when the producer has delivered one more message.
                    int expected = i + 1;
                    try {
                        MAILBOX.wait();
                        while (MAILBOX.delivered < expected) {
                            MAILBOX.wait();
                        }
                    } catch (InterruptedException e) {
                        return;
                    }
                    MAILBOX.taken = expected;
                    MAILBOX.notifyAll();
                }
            }
        }, "consumer");
        Thread producer = new Thread(() -> {
            for (int i = 0; i < WAITS; i++) {
                synchronized (MAILBOX) {
                    MAILBOX.delivered = i + 1;
                    MAILBOX.notifyAll();
                }
                // Wait (without Object.wait) until the consumer took it and is waiting again.
                while (true) {
                    synchronized (MAILBOX) {
                        if (MAILBOX.taken == i + 1) {
                            break;
                        }
                    }
                    Thread.onSpinWait();
                }
            }
        }, "producer");
        consumer.start();
        Thread.sleep(50);
        producer.start();
        consumer.join();
        producer.join();
    }

    static void holdAndBlock() throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            synchronized (LOCK) {
                held.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    // Ending.
                }
            }
        }, "holder");
        holder.start();
        held.await();
        Thread[] blocked = new Thread[2];
        for (int i = 0; i < 2; i++) {
            blocked[i] = new Thread(() -> {
                synchronized (LOCK) {
                    LOCK.hashCode();
                }
            }, "blocked-" + (i + 1));
            blocked[i].start();
        }
        for (Thread b : blocked) {
            while (b.getState() != Thread.State.BLOCKED) {
                Thread.sleep(5);
            }
        }
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in)).readLine();
        release.countDown();
        holder.join();
        for (Thread b : blocked) {
            b.join();
        }
    }

    public static void main(String[] args) throws Exception {
        contend();
        waitAndNotify();
        if (args.length > 0 && args[0].equals("hold")) {
            holdAndBlock();
        }
        System.out.println("done");
    }
}
