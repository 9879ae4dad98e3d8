// Test program for `hprof diff` on heap dumps: a static map that leaks on command. Prints
// "READY <pid>", then reads commands from standard input, one per line:
//   grow N SIZE   puts N new entries (Integer keys from 1,000,000 up, never cached) holding a
//                 new byte[SIZE] each into LeakHold.CACHE, then prints "GREW <entries>";
// and exits when its standard input closes.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.HashMap;
import java.util.Map;

public class LeakHold {
    static final Map<Integer, byte[]> CACHE = new HashMap<>();
    static int next = 1_000_000;

    public static void main(String[] args) throws Exception {
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            String[] words = line.trim().split(" ");
            if (words[0].equals("grow")) {
                int n = Integer.parseInt(words[1]);
                int size = Integer.parseInt(words[2]);
                for (int i = 0; i < n; i++) {
                    CACHE.put(next++, new byte[size]);
                }
                System.out.println("GREW " + CACHE.size());
                System.out.flush();
            }
        }
    }
}
