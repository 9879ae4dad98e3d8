// Holds known waste for the waste reports of `hprof analyze`: 50,000 String objects with one
// value (each with its own byte[]), 10,000 empty HashMaps whose 16-slot table was made by a put
// and left by a remove, and 5,000 ArrayLists of capacity 1,000 holding one element. Prints
// "VALUE <the value>" and "READY <pid>", then waits until its standard input closes.

import java.util.ArrayList;
import java.util.HashMap;

public class WasteShapes {
    static Object[] strings;
    static Object[] maps;
    static Object[] lists;

    public static void main(String[] args) throws Exception {
        // Made at run time, so no constant of the class holds the same value.
        String value = new StringBuilder("waste").append('-').append(20_000 + 26).append("-copies").toString();
        strings = new Object[50_000];
        for (int i = 0; i < strings.length; i++) {
            strings[i] = new String(value.toCharArray());
        }
        maps = new Object[10_000];
        Integer key = 7;
        for (int i = 0; i < maps.length; i++) {
            HashMap<Integer, Integer> map = new HashMap<>();
            map.put(key, key);
            map.remove(key);
            maps[i] = map;
        }
        lists = new Object[5_000];
        for (int i = 0; i < lists.length; i++) {
            ArrayList<Integer> list = new ArrayList<>(1_000);
            list.add(key);
            lists[i] = list;
        }
        System.out.println("VALUE " + value);
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        while (System.in.read() >= 0) {
            // Wait for the test to close standard input.
        }
    }
}
