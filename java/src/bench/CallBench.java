// Benchmark program for cpu=times: call-heavy, single-threaded work in small methods (a tiny
// expression-tree interpreter with virtual eval() calls, a recursive fib(20), getters and
// setters), about 92,900 calls per iteration (as counted by cpu=times), so the cost of counting
// calls shows as extra wall time. Argument: iterations (default 6500: about 604 million calls,
// about 1.5 s without an agent). Prints
// "checksum = <value>".

package bench;

public class CallBench {
    static volatile long sink;

    abstract static class Node {
        abstract int eval(int x);
    }

    static final class Const extends Node {
        final int value;

        Const(int value) {
            this.value = value;
        }

        @Override
        int eval(int x) {
            return value;
        }
    }

    static final class Var extends Node {
        @Override
        int eval(int x) {
            return x;
        }
    }

    static final class Add extends Node {
        final Node left;
        final Node right;

        Add(Node left, Node right) {
            this.left = left;
            this.right = right;
        }

        @Override
        int eval(int x) {
            return left.eval(x) + right.eval(x);
        }
    }

    static final class Mul extends Node {
        final Node left;
        final Node right;

        Mul(Node left, Node right) {
            this.left = left;
            this.right = right;
        }

        @Override
        int eval(int x) {
            return left.eval(x) * right.eval(x);
        }
    }

    static final class Neg extends Node {
        final Node operand;

        Neg(Node operand) {
            this.operand = operand;
        }

        @Override
        int eval(int x) {
            return -operand.eval(x);
        }
    }

    // Evaluates whenTrue if cond is even, otherwise whenFalse.
    static final class If extends Node {
        final Node cond;
        final Node whenTrue;
        final Node whenFalse;

        If(Node cond, Node whenTrue, Node whenFalse) {
            this.cond = cond;
            this.whenTrue = whenTrue;
            this.whenFalse = whenFalse;
        }

        @Override
        int eval(int x) {
            return (cond.eval(x) & 1) == 0 ? whenTrue.eval(x) : whenFalse.eval(x);
        }
    }

    static final class Counter {
        private long total;
        private int calls;

        long getTotal() {
            return total;
        }

        void setTotal(long total) {
            this.total = total;
        }

        int getCalls() {
            return calls;
        }

        void add(long value) {
            setTotal(getTotal() + value);
            calls++;
        }
    }

    static int seed = 4;

    // A small linear congruential generator, so the tree is the same on every run.
    static int next(int bound) {
        seed = seed * 1103515245 + 12345;
        return (seed >>> 16) % bound;
    }

    // A random tree; with seed 4 and depth 6 it has 53 nodes of all six classes, so the eval()
    // call sites stay megamorphic (real virtual calls, not one inlined target).
    static Node build(int depth) {
        if (depth == 0 || next(6) == 0) {
            return next(2) == 0 ? new Var() : new Const(next(9) - 4);
        }
        switch (next(4)) {
            case 0:
                return new Add(build(depth - 1), build(depth - 1));
            case 1:
                return new Mul(build(depth - 1), build(depth - 1));
            case 2:
                return new Neg(build(depth - 1));
            default:
                return new If(build(depth - 1), build(depth - 1), build(depth - 1));
        }
    }

    static int fib(int n) {
        return n < 2 ? n : fib(n - 1) + fib(n - 2);
    }

    // One outer iteration, a method of its own so the JIT compiles the work as an ordinary
    // method rather than only by on-stack replacement of main's loop.
    static void iteration(Node tree, Counter counter, int it) {
        for (int x = 0; x < 2000; x++) {
            counter.add(tree.eval(x + it));
        }
        counter.add(fib(20));
        sink += counter.getCalls();
    }

    public static void main(String[] args) {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 6500;
        Node tree = build(6);
        Counter counter = new Counter();
        for (int it = 0; it < iterations; it++) {
            iteration(tree, counter, it);
        }
        sink += counter.getTotal();
        System.out.println("checksum = " + counter.getTotal());
    }
}
