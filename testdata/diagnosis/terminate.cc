// A C++ program that lets an exception escape, as a native extension can.
#include <stdexcept>
int main() { throw std::runtime_error("tensor shapes do not match"); }
