// Agent test program for cpu=times with virtual threads (JDK 21 and later; compiled for Java 11,
// so the executor is found by reflection). Argument: the number of tasks, each run in its own
// virtual thread: task(n) calls work() 10 times, sleeps 1 ms when n is even (so the virtual
// thread unmounts in the middle of the call), then calls work() once more.

import java.lang.reflect.Method;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

public class VirtualCalls {
    static volatile long sink;

    static int work(int i) {
        return i * 31 + 7;
    }

    static void task(int n) throws InterruptedException {
        for (int i = 0; i < 10; i++) {
            sink += work(i);
        }
        if (n % 2 == 0) {
            Thread.sleep(1);
        }
        sink += work(n);
    }

    public static void main(String[] args) throws Exception {
        Method factory = java.util.concurrent.Executors.class.getMethod("newVirtualThreadPerTaskExecutor");
        ExecutorService executor = (ExecutorService) factory.invoke(null);
        int tasks = Integer.parseInt(args[0]);
        for (int i = 0; i < tasks; i++) {
            final int n = i;
            executor.submit(() -> {
                task(n);
                return null;
            });
        }
        executor.shutdown();
        if (!executor.awaitTermination(2, TimeUnit.MINUTES)) {
            throw new IllegalStateException("tasks did not finish");
        }
        System.out.println("VirtualCalls done " + tasks);
    }
}
