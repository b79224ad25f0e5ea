// exceptions.cpp - a C++ command built with Emscripten's -fwasm-exceptions
// (the legacy exception-handling instructions: try, catch_all, rethrow,
// delegate), for tests/cxx-guest.sh.  Each line it prints is a case; the
// expected output is exceptions.expected.  Build (Debian's emscripten):
//   em++ -O2 -sSTANDALONE_WASM -fwasm-exceptions exceptions.cpp \
//     -o exceptions.wasm
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

static int live_guards;

struct guard {
	guard() { live_guards++; }
	~guard() { live_guards--; }
};

struct app_error : std::runtime_error {
	int code;
	app_error(const char *what, int c) : std::runtime_error(what), code(c) {}
};

struct shape {
	virtual ~shape() = default;
	virtual double area() const = 0;
};

struct square : shape {
	double side;
	explicit square(double s) : side(s)
	{
		if (s < 0)
			throw std::invalid_argument("negative side");
	}
	double area() const override { return side * side; }
};

// Recursion that throws at the bottom, with a guard in every frame.
static int descend(int n)
{
	guard g;
	if (n == 0)
		throw app_error("bottom", 42);
	return descend(n - 1) + 1;
}

static int parse_or(const std::string &s, int dflt)
{
	try {
		return std::stoi(s);
	} catch (const std::invalid_argument &) {
		return dflt;
	} catch (const std::out_of_range &) {
		return -dflt;
	}
}

// A catch that rethrows with `throw;`, caught again outside.
static std::string rethrown()
{
	try {
		try {
			throw app_error("inner", 7);
		} catch (const std::exception &e) {
			throw;
		}
	} catch (const app_error &e) {
		return std::string("rethrown ") + e.what() + " " +
		       std::to_string(e.code);
	}
	return "not caught";
}

// An exception thrown inside a catch handler.
static std::string nested()
{
	try {
		try {
			throw std::runtime_error("first");
		} catch (const std::runtime_error &e) {
			throw std::logic_error(std::string("second after ") +
					       e.what());
		}
	} catch (const std::logic_error &e) {
		return e.what();
	}
	return "not caught";
}

static int by_value()
{
	try {
		throw 17;
	} catch (long) {
		return -1;
	} catch (int v) {
		return v;
	}
	return 0;
}

int main()
{
	std::vector<std::string> words{"pear", "apple", "fig", "kiwi"};
	std::sort(words.begin(), words.end());
	std::string joined;
	for (const auto &w : words)
		joined += (joined.empty() ? "" : ",") + w;
	std::printf("sorted %s\n", joined.c_str());

	try {
		descend(10);
	} catch (const app_error &e) {
		std::printf("caught %s code %d, guards left %d\n", e.what(),
			    e.code, live_guards);
	}

	std::printf("parse %d %d %d\n", parse_or("123", 5), parse_or("x", 5),
		    parse_or("99999999999999999999", 5));

	try {
		std::vector<int> v(3);
		v.at(7) = 1;
	} catch (const std::out_of_range &) {
		std::printf("out_of_range from at()\n");
	}

	std::vector<std::unique_ptr<shape>> shapes;
	int refused = 0;
	for (double s : {1.5, -1.0, 2.0, -3.0}) {
		try {
			shapes.push_back(std::make_unique<square>(s));
		} catch (const std::invalid_argument &e) {
			refused++;
		}
	}
	double total = 0;
	for (const auto &p : shapes)
		total += p->area();
	std::printf("shapes %zu refused %d area %.2f\n", shapes.size(),
		    refused, total);

	std::printf("%s\n", rethrown().c_str());
	std::printf("%s\n", nested().c_str());
	std::printf("by value %d\n", by_value());

	std::map<std::string, int> counts;
	int thrown = 0;
	for (int i = 0; i < 1000; i++) {
		try {
			if (i % 3 == 0)
				throw app_error("tick", i);
			counts["ok"]++;
		} catch (const app_error &e) {
			thrown++;
			counts["err"] += e.code % 2;
		}
	}
	std::printf("loop thrown %d ok %d odd %d\n", thrown, counts["ok"],
		    counts["err"]);

	try {
		throw std::bad_alloc();
	} catch (const std::exception &e) {
		std::printf("base catch %s\n", e.what());
	}
	return 0;
}
