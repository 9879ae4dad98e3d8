// Agent test program for heap=sites' fast mode: allocations in a hidden class's code, which no
// class file load hook shows. On JDK 15+ it defines HiddenAllocs$Payload's bytes again as a
// hidden class (Lookup.defineHiddenClass, by reflection) and runs its make(1,000,000): one
// million int[6] (and one Object[] of 100,000 keeping every tenth). Prints
// "hidden NAME made 1000000 kept 100000", or "skipped" before JDK 15.

import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Array;
import java.lang.reflect.Method;

public class HiddenAllocs {
    public static class Payload {
        public static Object[] make(int n) {
            Object[] keep = new Object[n / 10];
            for (int i = 0; i < n; i++) {
                int[] a = new int[6];
                a[0] = i;
                if (i % 10 == 0) {
                    keep[i / 10] = a;
                }
            }
            return keep;
        }
    }

    public static void main(String[] args) throws Exception {
        if (Runtime.version().feature() < 15) {
            System.out.println("skipped");
            return;
        }
        byte[] bytes;
        try (InputStream in = HiddenAllocs.class.getResourceAsStream("HiddenAllocs$Payload.class")) {
            bytes = in.readAllBytes();
        }
        Class<?> option = Class.forName("java.lang.invoke.MethodHandles$Lookup$ClassOption");
        Object none = Array.newInstance(option, 0);
        Method define = MethodHandles.Lookup.class.getMethod(
                "defineHiddenClass", byte[].class, boolean.class, none.getClass());
        MethodHandles.Lookup lookup =
                (MethodHandles.Lookup) define.invoke(MethodHandles.lookup(), bytes, true, none);
        Class<?> hidden = lookup.lookupClass();
        Object[] kept = (Object[]) hidden.getMethod("make", int.class).invoke(null, 1_000_000);
        System.out.println("hidden " + hidden.getName() + " made 1000000 kept " + kept.length);
    }
}
