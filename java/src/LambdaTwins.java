// Agent test program for heap=sites' lambda sites: two capturing lambdas of one class with the
// same functional interface (IntSupplier) and the same captured type (int), made 3,000 times
// (in few) and 7,000 times (in many); and two that capture `this` and an int (instance
// lambdas, made 2,000 times in fewOwn and 5,000 times in manyOwn); all kept live. Prints
// "kept 17000 sum S".

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

    final int base;

    LambdaTwins(int base) {
        this.base = base;
    }

    void fewOwn() {
        for (int i = 0; i < 2_000; i++) {
            final int n = i;
            KEPT.add(() -> base + n);
        }
    }

    void manyOwn() {
        for (int i = 0; i < 5_000; i++) {
            final int n = i;
            KEPT.add(() -> base - n);
        }
    }

    public static void main(String[] args) {
        few();
        many();
        LambdaTwins own = new LambdaTwins(1);
        own.fewOwn();
        own.manyOwn();
        long sum = 0;
        for (IntSupplier s : KEPT) {
            sum += s.getAsInt();
        }
        System.out.println("kept " + KEPT.size() + " sum " + sum);
    }
}
