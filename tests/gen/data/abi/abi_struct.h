/* abi_struct.h: a function that passes a struct by value (tests/gen/data/abi_struct.ini). */
struct ab_pair {
    int a, b;
};
int abPair(struct ab_pair p);
