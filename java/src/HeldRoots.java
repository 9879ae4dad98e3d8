// Holds two objects through GC roots of known kinds, for the `hprof analyze` tests: a JniHeld
// only through a JNI global reference, made by the native library whose path is the system
// property heldroots.lib (its HeldRoots.hold calls NewGlobalRef; none without the property), and a StackHeld only through a local variable
// of the method holdOnStack, run by the thread "stack-holder". Each holds a byte[] of a known
// length. Prints "READY <pid>" once both are held and waits until its standard input closes.

import java.util.concurrent.CountDownLatch;

public class HeldRoots {
    static final class JniHeld {
        final byte[] payload = new byte[12345];
    }

    static final class StackHeld {
        final byte[] payload = new byte[23456];
    }

    /** Keeps {@code object} alive through a JNI global reference (never deleted). */
    static native void hold(Object object);

    public static void main(String[] args) throws Exception {
        String library = System.getProperty("heldroots.lib");
        if (library != null) {
            System.load(library);
            hold(new JniHeld());
        }
        CountDownLatch ready = new CountDownLatch(1);
        Thread holder = new Thread(() -> holdOnStack(ready), "stack-holder");
        holder.setDaemon(true);
        holder.start();
        ready.await();
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        while (System.in.read() >= 0) {
            // Wait for the test to close standard input.
        }
    }

    static void holdOnStack(CountDownLatch ready) {
        StackHeld local = new StackHeld();
        ready.countDown();
        try {
            Thread.sleep(Long.MAX_VALUE);
        } catch (InterruptedException e) {
            // Never interrupted.
        }
        System.out.println(local.payload.length);
    }
}
