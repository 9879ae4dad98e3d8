// Agent test program for cpu=times: starts 50 threads that each call work() 1000 times, keeps
// their Thread objects after they end, and prints how many of them still hold a tracker state
// (the field cpu=times adds to java.lang.Thread) and whether the running main thread holds
// one; "no field" without it. Run with --add-opens java.base/java.lang=ALL-UNNAMED.

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;

public class ThreadStates {
    static final int THREADS = 50;
    static volatile long sink;

    static void work(int i) {
        sink += i;
    }

    public static void main(String[] args) throws Exception {
        List<Thread> kept = new ArrayList<>();
        for (int n = 0; n < THREADS; n++) {
            Thread t = new Thread(() -> {
                for (int i = 0; i < 1000; i++) {
                    work(i);
                }
            }, "kept-" + n);
            t.start();
            kept.add(t);
        }
        for (Thread t : kept) {
            t.join();
        }
        Field state;
        try {
            state = Thread.class.getDeclaredField("hprofState");
        } catch (NoSuchFieldException e) {
            System.out.println("no field");
            return;
        }
        state.setAccessible(true);
        int holding = 0;
        for (Thread t : kept) {
            if (state.get(t) != null) {
                holding++;
            }
        }
        System.out.println("ended threads holding a state: " + holding + " of " + THREADS);
        System.out.println("main holds a state: " + (state.get(Thread.currentThread()) != null));
    }
}
