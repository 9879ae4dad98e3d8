// Holds object graphs of known shapes for the retained-size tests of `hprof analyze`:
// a static HashMap of byte[] (the leak), a chain, a diamond, a cycle, a subtree shared by two
// holders, objects held only by a thread's stack and by a JNI-free static array, a weak
// reference, and garbage. Prints "READY <pid>" and waits until its standard input closes.

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class RetainedShapes {
    static final Map<Integer, byte[]> CACHE = new HashMap<>();
    static Node chain;
    static Node diamondTop;
    static Node cycle;
    static Node sharedA;
    static Node sharedB;
    static Object[] statics = new Object[4];
    static WeakReference<byte[]> weak;
    static byte[] weakTarget;

    static final class Node {
        Node left;
        Node right;
        byte[] payload;

        Node(int size) {
            payload = new byte[size];
        }
    }

    public static void main(String[] args) throws Exception {
        int entries = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        for (int i = 0; i < entries; i++) {
            CACHE.put(i, new byte[1000]);
        }
        chain = new Node(10);
        Node at = chain;
        for (int i = 0; i < 100; i++) {
            at.left = new Node(i);
            at = at.left;
        }
        diamondTop = new Node(1);
        diamondTop.left = new Node(2);
        diamondTop.right = new Node(3);
        Node bottom = new Node(4000);
        diamondTop.left.left = bottom;
        diamondTop.right.left = bottom;
        cycle = new Node(5);
        cycle.left = new Node(6);
        cycle.left.left = new Node(7);
        cycle.left.left.left = cycle;
        Node shared = new Node(3000);
        shared.left = new Node(300);
        sharedA = new Node(8);
        sharedB = new Node(9);
        sharedA.left = shared;
        sharedB.left = shared;
        statics[0] = new byte[5000];
        statics[1] = new ArrayList<>(List.of("a", "b"));
        weakTarget = new byte[700];
        weak = new WeakReference<>(new byte[800]);
        for (int i = 0; i < 1000; i++) {
            new Node(100).left = new Node(50);
        }
        Node local = new Node(6000);
        local.left = new Node(600);
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        while (System.in.read() >= 0) {
            // Wait for the test to close standard input.
        }
        System.out.println(local.payload.length);
    }
}
