/*
 * nbody.c - f64 kernel: a symplectic-Euler simulation of the Sun and the
 * four giant planets for n steps (the classic n-body workload: f64
 * add/mul/div/sqrt over a small array of structs).  The checksum is the
 * IEEE bit pattern of the final energy mixed with the Sun's position.
 * No fused multiply-add and no reassociation, so every engine and the
 * native build compute the same bits.
 */
#include "bench.h"

#define NBODIES 5

const int32_t kernel_default_n = 2000000;

struct body {
	double x, y, z, vx, vy, vz, mass;
};

static const double PI = 3.141592653589793;
#define SOLAR_MASS    (4 * PI * PI)
#define DAYS_PER_YEAR 365.24

static struct body bodies[NBODIES];

static double f64_sqrt(double x)
{
	return __builtin_sqrt(x);
}

void kernel_setup(int32_t n)
{
	/* Sun, Jupiter, Saturn, Uranus, Neptune (AU, AU/day, solar masses). */
	static const struct body init[NBODIES] = {
		{0, 0, 0, 0, 0, 0, 1},
		{4.84143144246472090e+00, -1.16032004402742839e+00,
		 -1.03622044471123109e-01, 1.66007664274403694e-03,
		 7.69901118419740425e-03, -6.90460016972063023e-05,
		 9.54791938424326609e-04},
		{8.34336671824457987e+00, 4.12479856412430479e+00,
		 -4.03523417114321381e-01, -2.76742510726862411e-03,
		 4.99852801234917238e-03, 2.30417297573763929e-05,
		 2.85885980666130812e-04},
		{1.28943695621391310e+01, -1.51111514016986312e+01,
		 -2.23307578892655734e-01, 2.96460137564761618e-03,
		 2.37847173959480950e-03, -2.96589568540237556e-05,
		 4.36624404335156298e-05},
		{1.53796971148509165e+01, -2.59193146099879641e+01,
		 1.79258772950371181e-01, 2.68067772490389322e-03,
		 1.62824170038242295e-03, -9.51592254519715870e-05,
		 5.15138902046611451e-05},
	};
	double px = 0, py = 0, pz = 0;
	unsigned i;

	for (i = 0; i < NBODIES; i++) {
		bodies[i] = init[i];
		if (i) {
			bodies[i].vx *= DAYS_PER_YEAR;
			bodies[i].vy *= DAYS_PER_YEAR;
			bodies[i].vz *= DAYS_PER_YEAR;
		}
		bodies[i].mass *= SOLAR_MASS;
		px += bodies[i].vx * bodies[i].mass;
		py += bodies[i].vy * bodies[i].mass;
		pz += bodies[i].vz * bodies[i].mass;
	}
	/* Give the Sun the momentum that keeps the centre of mass still. */
	bodies[0].vx = -px / SOLAR_MASS;
	bodies[0].vy = -py / SOLAR_MASS;
	bodies[0].vz = -pz / SOLAR_MASS;
}

static void advance(double dt)
{
	unsigned i, j;

	for (i = 0; i < NBODIES; i++) {
		struct body *a = &bodies[i];

		for (j = i + 1; j < NBODIES; j++) {
			struct body *b = &bodies[j];
			double dx = a->x - b->x, dy = a->y - b->y,
			       dz = a->z - b->z;
			double d2 = dx * dx + dy * dy + dz * dz;
			double mag = dt / (d2 * f64_sqrt(d2));

			a->vx -= dx * b->mass * mag;
			a->vy -= dy * b->mass * mag;
			a->vz -= dz * b->mass * mag;
			b->vx += dx * a->mass * mag;
			b->vy += dy * a->mass * mag;
			b->vz += dz * a->mass * mag;
		}
	}
	for (i = 0; i < NBODIES; i++) {
		bodies[i].x += dt * bodies[i].vx;
		bodies[i].y += dt * bodies[i].vy;
		bodies[i].z += dt * bodies[i].vz;
	}
}

static double energy(void)
{
	double e = 0;
	unsigned i, j;

	for (i = 0; i < NBODIES; i++) {
		const struct body *a = &bodies[i];

		e += 0.5 * a->mass *
		     (a->vx * a->vx + a->vy * a->vy + a->vz * a->vz);
		for (j = i + 1; j < NBODIES; j++) {
			const struct body *b = &bodies[j];
			double dx = a->x - b->x, dy = a->y - b->y,
			       dz = a->z - b->z;

			e -= a->mass * b->mass /
			     f64_sqrt(dx * dx + dy * dy + dz * dz);
		}
	}
	return e;
}

static uint64_t f64_bits(double d)
{
	union {
		double d;
		uint64_t u;
	} v = {.d = d};

	return v.u;
}

uint64_t kernel_work(int32_t n)
{
	uint64_t h = BENCH_MIX_INIT;
	int32_t step;

	h = bench_mix(h, f64_bits(energy()));
	for (step = 0; step < n; step++)
		advance(0.01);
	h = bench_mix(h, f64_bits(energy()));
	h = bench_mix(h, f64_bits(bodies[0].x));
	return h;
}
