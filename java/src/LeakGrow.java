// A growing static map filled by one method (grow, one line): 100,000 entries of a boxed key
// and a 512-byte array, about 60 MB, for the allocation-site join of `hprof analyze` under
// the agent's heap=all. Prints "GROW <line of the put>" and exits (the agent dumps at exit).
// With the argument "wait" it prints "READY <pid>" and waits until its standard input closes.

import java.util.HashMap;
import java.util.Map;

public class LeakGrow {
    static final Map<Integer, byte[]> CACHE = new HashMap<>();

    static void grow(int entries) {
        for (int i = 0; i < entries; i++) {
            CACHE.put(i, new byte[512]); // GROW
        }
    }

    public static void main(String[] args) throws Exception {
        grow(100_000);
        // Some garbage and some short-lived objects elsewhere, so the sites are not alone.
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 20_000; i++) {
            text.append(i % 10);
            if (text.length() > 1000) {
                text.setLength(0);
            }
        }
        System.out.println("GROW " + CACHE.size() + " " + text.length());
        if (args.length > 0 && args[0].equals("wait")) {
            System.out.println("READY " + ProcessHandle.current().pid());
            System.out.flush();
            while (System.in.read() >= 0) {
                // Wait for the test to close standard input.
            }
        }
    }
}
