// Benchmark program: builds and keeps reachable a heap whose jcmd dump is about 1.3 GB, in
// millions of small objects, Strings, object arrays and large primitive arrays, then prints
// "READY <pid>" and waits until its standard input closes. Run with -Xmx2g or more. An optional
// argument scales every count, in percent (default 100), for dumps of other sizes.

package bench;

import java.util.ArrayList;
import java.util.List;

public class BigHeap {
    static final int ITEMS = 10_000_000;
    static final int STRINGS = 2_000_000;
    static final int OBJECT_ARRAYS = 200_000;
    static final int INT_ARRAYS = 4_000; // 25,000 ints each

    static final class Item {
        final int id;
        final long value;
        final Item next;
        final String name;

        Item(int id, Item next, String name) {
            this.id = id;
            this.value = id * 31L;
            this.next = next;
            this.name = name;
        }
    }

    static Object keep;

    public static void main(String[] args) throws Exception {
        int percent = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        int items = (int) ((long) ITEMS * percent / 100);
        int strings = Math.max(1, (int) ((long) STRINGS * percent / 100));
        int objectArrays = (int) ((long) OBJECT_ARRAYS * percent / 100);
        int intArrays = (int) ((long) INT_ARRAYS * percent / 100);
        List<Object> roots = new ArrayList<>();
        String[] names = {"alpha", "beta", "gamma", "delta"};
        Item[] chains = new Item[1000];
        for (int i = 0; i < items; i++) {
            int chain = i % chains.length;
            chains[chain] = new Item(i, chains[chain], names[i & 3]);
        }
        roots.add(chains);
        String[] texts = new String[strings];
        for (int i = 0; i < strings; i++) {
            texts[i] = "s" + i;
        }
        roots.add(texts);
        for (int i = 0; i < objectArrays; i++) {
            Object[] array = new Object[20];
            for (int k = 0; k < array.length; k += 2) {
                array[k] = texts[(i * 20 + k) % strings];
            }
            roots.add(array);
        }
        for (int i = 0; i < intArrays; i++) {
            int[] array = new int[25_000];
            array[i % array.length] = i;
            roots.add(array);
        }
        keep = roots;
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        while (System.in.read() >= 0) {
            // Wait until the benchmark closes our standard input.
        }
    }
}
