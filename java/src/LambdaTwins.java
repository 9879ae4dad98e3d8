// Agent test program for heap=sites' lambda sites: two capturing lambdas of one class with the
// same functional interface (IntSupplier) and the same captured type (int), made 3,000 times
// (in few) and 7,000 times (in many), all kept live. Prints "kept 10000 sum S".

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;

public class LambdaTwins {
    static final List<IntSupplier> KEPT = new ArrayList<>(10_000);

    static void few() {
        for (int i = 0; i < 3_000; i++) {
            final int n = i;
            KEPT.add(() -> n);
        }
    }

    static void many() {
        for (int i = 0; i < 7_000; i++) {
            final int n = i;
            KEPT.add(() -> n * 2);
        }
    }

    public static void main(String[] args) {
        few();
        many();
        long sum = 0;
        for (IntSupplier s : KEPT) {
            sum += s.getAsInt();
        }
        System.out.println("kept " + KEPT.size() + " sum " + sum);
    }
}
