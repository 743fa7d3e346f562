/* pcg.c: PCG32 seeding, bounded integers, uniform doubles and normal variates.
 *
 * The integer part follows pcg-c's pcg32_srandom_r and pcg32_boundedrand_r, and so is
 * bit-identical to pcg-cpp's pcg32 and its rng(bound).
 *
 * Normals use the ziggurat of Marsaglia and Tsang (2000), with 256 layers as numpy's
 * Generator.standard_normal has. Each attempt takes 64 fresh bits from two outputs: 8
 * for the layer, 1 for the sign and 52 for the abscissa. The layer and the value never
 * share bits, which avoids the low-bit correlation of the original 32-bit RNOR. The
 * slow path calls libm's exp and log1p; those may differ by an ulp between libm builds,
 * which could change a draw with odds near 2^-52 per slow-path attempt.
 */
#include "pcg.h"

#include <math.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

/* The wedge test must round as written on every machine: no fused multiply-adds. GCC
 * fuses only in its GNU modes, and the build compiles ISO C11; Clang takes this. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

void ld_pcg32_seed(ld_pcg32 *rng, uint64_t initstate, uint64_t initseq)
{
    rng->state = 0;
    rng->inc = (initseq << 1u) | 1u;
    (void)ld_pcg32_next(rng);
    rng->state += initstate;
    (void)ld_pcg32_next(rng);
}

/* Rejecting outputs below 2^32 mod bound leaves a whole number of copies of [0, bound)
 * to reduce, so every residue is equally likely. */
uint32_t ld_pcg32_bounded(ld_pcg32 *rng, uint32_t bound)
{
    uint32_t threshold = -bound % bound;
    for (;;) {
        uint32_t r = ld_pcg32_next(rng);
        if (r >= threshold)
            return r % bound;
    }
}

/* hi - lo + 1 wraps to 0 only for the full 32-bit range, where any output will do. */
uint32_t ld_pcg32_range(ld_pcg32 *rng, uint32_t lo, uint32_t hi)
{
    uint32_t span = hi - lo + 1u;
    if (span == 0)
        return ld_pcg32_next(rng);
    return lo + ld_pcg32_bounded(rng, span);
}

/* Two outputs as one 64-bit word, the first in the high half. Both states come from
 * the same old one, old*M + inc and old*M^2 + inc*(M+1), so the two multiplies run side
 * by side instead of one after the other. The state is a bare word so that callers can
 * keep it in a register. */
static inline uint64_t pcg32_pair(uint64_t *state, uint64_t inc)
{
    uint64_t old = *state;
    uint64_t mid = old * LD_PCG32_MULT + inc;
    *state = old * (LD_PCG32_MULT * LD_PCG32_MULT) + inc * (LD_PCG32_MULT + 1u);
    return ((uint64_t)ld_pcg32_output(old) << 32u) | ld_pcg32_output(mid);
}

/* The top 53 of the 64 bits, scaled by 2^-53: exact, and never 1. */
double ld_pcg32_double(ld_pcg32 *rng)
{
    return (double)(int64_t)(pcg32_pair(&rng->state, rng->inc) >> 11u) * 0x1p-53;
}

/* The ziggurat for f(x) = exp(-x^2/2): 256 layers of equal area v, layer 0 the base
 * strip with the tail beyond R. Computed in long double from R and v, by the recursion
 * x[i-1] = f^-1(f(x[i]) + v/x[i]) from x[255] = R, and rounded once (printed in hex,
 * exactly):
 *   zig_k[i] = 2^52 * x[i-1]/x[i]  (zig_k[0] = 2^52 * R/(v/f(R)), zig_k[1] = 0),
 *   zig_w[i] = x[i] / 2^52         (zig_w[0] = v/f(R) / 2^52),
 *   zig_f[i] = f(x[i])             (zig_f[0] = 1).
 * An abscissa u of 52 bits is accepted at once when u < zig_k[layer]: then x = u*zig_w
 * lies under the layer above, inside f. */
#define LD_ZIG_LAYERS 256
#define LD_ZIG_R 3.6541528853610088
static const uint64_t zig_k[LD_ZIG_LAYERS] = {
    0x000ef33d8025ef65, 0x0000000000000000, 0x000c08be98fbc6b6, 0x000da354fabd8146,
    0x000e51f67ec1eeec, 0x000eb255e9d3f77e, 0x000eef4b817ecab8, 0x000f19470afa44ab,
    0x000f37ed61ffcb17, 0x000f4f469561255b, 0x000f61a5e41ba396, 0x000f707a755396a4,
    0x000f7cb2ec28449b, 0x000f86f10c6357d2, 0x000f8fa6578325dd, 0x000f9724c74dd0da,
    0x000f9da907dbf508, 0x000fa360f581fa72, 0x000fa86fde5b4bf8, 0x000facf160d354db,
    0x000fb0fb6718b90e, 0x000fb49f8d5374c5, 0x000fb7ec2366fe77, 0x000fbaece9a1e50c,
    0x000fbdab9d040bed, 0x000fc03060ff6c57, 0x000fc2821037a248, 0x000fc4a67ae25bd1,
    0x000fc6a2977aee30, 0x000fc87aa92896a4, 0x000fca325e4bde85, 0x000fcbcce902231a,
    0x000fcd4d12f839c4, 0x000fceb54d8fec99, 0x000fd007bf1dc930, 0x000fd1464dd6c4e5,
    0x000fd272a8e2f450, 0x000fd38e4ff0c91e, 0x000fd49a9990b479, 0x000fd598b8920f52,
    0x000fd689c08e99ec, 0x000fd76ea9c8e832, 0x000fd848547b08e8, 0x000fd9178bad2c8b,
    0x000fd9dd07a7add2, 0x000fda9970105e8b, 0x000fdb4d5dc02e1f, 0x000fdbf95c5bfcd0,
    0x000fdc9debb99a7d, 0x000fdd3b8118729d, 0x000fddd288342f8f, 0x000fde6364369f63,
    0x000fdeee708d514e, 0x000fdf7401a6b42e, 0x000fdff46599ed3e, 0x000fe06fe4bc24f1,
    0x000fe0e6c225a258, 0x000fe1593c28b84b, 0x000fe1c78cbc3f98, 0x000fe231e9db1ca9,
    0x000fe29885da1b91, 0x000fe2fb8fb54186, 0x000fe35b33558d4a, 0x000fe3b799d0002a,
    0x000fe410e99ead7e, 0x000fe46746d47734, 0x000fe4bad34c095b, 0x000fe50baed29524,
    0x000fe559f74ebc77, 0x000fe5a5c8e41212, 0x000fe5ef3e138689, 0x000fe6366fd91077,
    0x000fe67b75c6d578, 0x000fe6be661e11aa, 0x000fe6ff55e5f4f2, 0x000fe73e5900a701,
    0x000fe77b823e9e39, 0x000fe7b6e37070a1, 0x000fe7f08d774242, 0x000fe8289053f08c,
    0x000fe85efb35173b, 0x000fe893dc840864, 0x000fe8c741f0cebc, 0x000fe8f9387d4ef6,
    0x000fe929cc879b1c, 0x000fe95909d388ea, 0x000fe986fb939aa1, 0x000fe9b3ac714865,
    0x000fe9df2694b6d5, 0x000fea0973abe67b, 0x000fea329cf166a4, 0x000fea5aab32952c,
    0x000fea81a6d57419, 0x000feaa797de1cef, 0x000feacc85f3d91f, 0x000feaf07865e63c,
    0x000feb13762fec12, 0x000feb3585fe2a4a, 0x000feb56ae3162b4, 0x000feb76f4e284f9,
    0x000feb965fe62013, 0x000febb4f4cf9d7c, 0x000febd2b8f449cf, 0x000febefb16e2e3d,
    0x000fec0be31ebde8, 0x000fec2752b15a14, 0x000fec42049dafd3, 0x000fec5bfd29f196,
    0x000fec75406ceef4, 0x000fec8dd2500cb4, 0x000feca5b6911f10, 0x000fecbcf0c427fe,
    0x000fecd38454fb15, 0x000fece97488c8b3, 0x000fecfec47f91b7, 0x000fed1377358528,
    0x000fed278f844903, 0x000fed3b10242f4c, 0x000fed4dfbad586d, 0x000fed605498c3dc,
    0x000fed721d414fe8, 0x000fed8357e4a981, 0x000fed9406a42cc8, 0x000feda42b85b704,
    0x000fedb3c8746ab3, 0x000fedc2df416652, 0x000fedd171a46e52, 0x000feddf813c8ad2,
    0x000feded0f90997f, 0x000fedfa1e0fd413, 0x000fee06ae124bc4, 0x000fee12c0d95a06,
    0x000fee1e579006df, 0x000fee29734b6524, 0x000fee34150ae4bb, 0x000fee3e3db89b3c,
    0x000fee47ee2982f3, 0x000fee51271db086, 0x000fee59e9407f41, 0x000fee623528b42d,
    0x000fee6a0b5897f0, 0x000fee716c3e077a, 0x000fee7858327b81, 0x000fee7ecf7b06b9,
    0x000fee84d2484ab2, 0x000fee8a60b66342, 0x000fee8f7accc851, 0x000fee94207e25da,
    0x000fee9851a829eb, 0x000fee9c0e13485b, 0x000fee9f557273f3, 0x000feea22762ccae,
    0x000feea4836b42ab, 0x000feea668fc2d71, 0x000feea7d76ed6f9, 0x000feea8ce04fa0a,
    0x000feea94be8333b, 0x000feea95029640f, 0x000feea8d9c0075d, 0x000feea7e7897653,
    0x000feea678481d24, 0x000feea48aa29e82, 0x000feea21d22e4d9, 0x000fee9f2e352024,
    0x000fee9bbc26af2e, 0x000fee97c524f2e3, 0x000fee93473c0a39, 0x000fee8e40557515,
    0x000fee88ae369c79, 0x000fee828e7f3dfc, 0x000fee7bdea7b887, 0x000fee749bff37ff,
    0x000fee6cc3a9bd5e, 0x000fee64529e007f, 0x000fee5b45a32888, 0x000fee51994e57b5,
    0x000fee474a0006ce, 0x000fee3c53e12c4f, 0x000fee30b2e02ad7, 0x000fee2462ad8204,
    0x000fee175eb83c59, 0x000fee09a22a1447, 0x000fedfb27e349cb, 0x000fedebea76216c,
    0x000feddbe422047d, 0x000fedcb0ece39d3, 0x000fedb964042cf3, 0x000feda6dce938c9,
    0x000fed937237e98c, 0x000fed7f1c38a836, 0x000fed69d2b9c02a, 0x000fed538d06adff,
    0x000fed3c41dea422, 0x000fed23e76a2fd7, 0x000fed0a732fe643, 0x000fecefda07fe33,
    0x000fecd4100eb7b8, 0x000fecb708956eb4, 0x000fec98b61230c0, 0x000fec790a0da978,
    0x000fec57f50f31fd, 0x000fec356686c961, 0x000fec114cb4b334, 0x000febeb948e6fd0,
    0x000febc429a0b691, 0x000feb9af5ee0cdc, 0x000feb6fe1c98542, 0x000feb42d3ad1f9e,
    0x000feb13b00b2d4b, 0x000feae2591a02e8, 0x000feaaeae992256, 0x000fea788d8ee326,
    0x000fea3fcffd73e5, 0x000fea044c8dd9f6, 0x000fe9c5d62f563a, 0x000fe9843ba947a3,
    0x000fe93f471d4728, 0x000fe8f6bd76c5d6, 0x000fe8aa5dc4e8e6, 0x000fe859e07ab1ea,
    0x000fe804f690a93f, 0x000fe7ab488233bf, 0x000fe74c751f6aa5, 0x000fe6e8102aa201,
    0x000fe67da0b6abd8, 0x000fe60c9f38307d, 0x000fe5947338f742, 0x000fe51470977280,
    0x000fe48bd436f457, 0x000fe3f9bffd1e37, 0x000fe35d35eeb19b, 0x000fe2b5122fe4fd,
    0x000fe20003995557, 0x000fe13c82788314, 0x000fe068c4ee67af, 0x000fdf82b02b71aa,
    0x000fde87c57efeaa, 0x000fdd7509c63bfd, 0x000fdc46e529bf12, 0x000fdaf8f82e0282,
    0x000fd985e1b2ba75, 0x000fd7e6ef48cf04, 0x000fd613adbd650b, 0x000fd40149e2f011,
    0x000fd1a1a7b4c7ac, 0x000fcee204761f9e, 0x000fcba8d85e11b1, 0x000fc7d26ecd2d22,
    0x000fc32b2f1e22ec, 0x000fbd6581c0b839, 0x000fb606c4005433, 0x000fac40582a2873,
    0x000f9e971e014597, 0x000f89fa48a41dfb, 0x000f66c5f7f0302c, 0x000f1a5a4b331c49,
};

static const double zig_w[LD_ZIG_LAYERS] = {
    0x1.f493b7815d982p-51, 0x1.b8d0be3fdf703p-55, 0x1.250af3c2c5bc6p-54,
    0x1.57cb938443b71p-54, 0x1.801fce82fa71bp-54, 0x1.a230c2e4cd0cbp-54,
    0x1.c004d2f386207p-54, 0x1.dac2f5a747281p-54, 0x1.f32482d4cd5d0p-54,
    0x1.04d32278ebbb4p-53, 0x1.0f5053b025d4ap-53, 0x1.192a69741367dp-53,
    0x1.227a28f7a1afap-53, 0x1.2b52e3863d885p-53, 0x1.33c3fc05791fap-53,
    0x1.3bd9ec1a2b134p-53, 0x1.439ef8dff9b5ap-53, 0x1.4b1bb363dfeadp-53,
    0x1.52575621ad379p-53, 0x1.59580a707ce9cp-53, 0x1.60231cfd97ef1p-53,
    0x1.66bd261a37c44p-53, 0x1.6d2a292000577p-53, 0x1.736dad346f8adp-53,
    0x1.798ad10b32a7ep-53, 0x1.7f845ad46f549p-53, 0x1.855cc53430a7dp-53,
    0x1.8b1649e7b769fp-53, 0x1.90b2ea94ecf9ep-53, 0x1.96347822c1ef0p-53,
    0x1.9b9c98e38c54dp-53, 0x1.a0eccdca4a731p-53, 0x1.a62676d77cd5fp-53,
    0x1.ab4ad6e101636p-53, 0x1.b05b16d136ca2p-53, 0x1.b558487427a2fp-53,
    0x1.ba4368e529f40p-53, 0x1.bf1d62abf8239p-53, 0x1.c3e70f9594ef8p-53,
    0x1.c8a13a5323b66p-53, 0x1.cd4c9fe72268fp-53, 0x1.d1e9f0e80b74bp-53,
    0x1.d679d29e41f14p-53, 0x1.dafce0023b8c8p-53, 0x1.df73aa9f17656p-53,
    0x1.e3debb5d2ee02p-53, 0x1.e83e9337a6f04p-53, 0x1.ec93abdf982d2p-53,
    0x1.f0de784f0622ap-53, 0x1.f51f654d8f68cp-53, 0x1.f956d9e87d7b2p-53,
    0x1.fd8537dfa2eb1p-53, 0x1.00d56e04234eep-52, 0x1.02e40f5398f9dp-52,
    0x1.04eea9e16a5ffp-52, 0x1.06f565b72a014p-52, 0x1.08f869071f40fp-52,
    0x1.0af7d84bc6116p-52, 0x1.0cf3d664bcc83p-52, 0x1.0eec84b16086fp-52,
    0x1.10e20329515f1p-52, 0x1.12d4707310fc1p-52, 0x1.14c3e9f8e9143p-52,
    0x1.16b08bfc42020p-52, 0x1.189a71a78da37p-52, 0x1.1a81b51ee6d8bp-52,
    0x1.1c666f8f82acfp-52, 0x1.1e48b93e0d431p-52, 0x1.2028a9940a0a3p-52,
    0x1.2206572c4c6ecp-52, 0x1.23e1d7de9c322p-52, 0x1.25bb40ca96bfep-52,
    0x1.2792a661dd381p-52, 0x1.29681c719d71dp-52, 0x1.2b3bb62b82edbp-52,
    0x1.2d0d862e1b856p-52, 0x1.2edd9e8cba990p-52, 0x1.30ac10d6e48dap-52,
    0x1.3278ee1f4b933p-52, 0x1.3444470265ea4p-52, 0x1.360e2baca52d7p-52,
    0x1.37d6abe05586cp-52, 0x1.399dd6fb2b267p-52, 0x1.3b63bbfb83d06p-52,
    0x1.3d28698561de3p-52, 0x1.3eebede725a85p-52, 0x1.40ae571e09e76p-52,
    0x1.426fb2da6745fp-52, 0x1.44300e83c30a6p-52, 0x1.45ef773cac75ep-52,
    0x1.47adf9e66c338p-52, 0x1.496ba32488f30p-52, 0x1.4b287f602415ep-52,
    0x1.4ce49acb311ddp-52, 0x1.4ea001638a606p-52, 0x1.505abef5e5563p-52,
    0x1.5214df20a8b5cp-52, 0x1.53ce6d56a6650p-52, 0x1.558774e1bb2c9p-52,
    0x1.574000e555f79p-52, 0x1.58f81c60e8515p-52, 0x1.5aafd23241b5ap-52,
    0x1.5c672d17d733fp-52, 0x1.5e1e37b2f8cd4p-52, 0x1.5fd4fc89f5e39p-52,
    0x1.618b860a31fc5p-52, 0x1.6341de8a2b0a4p-52, 0x1.64f8104b7260dp-52,
    0x1.66ae257c99674p-52, 0x1.6864283b13139p-52, 0x1.6a1a22950b2b3p-52,
    0x1.6bd01e8b343bdp-52, 0x1.6d8626128d354p-52, 0x1.6f3c43161f856p-52,
    0x1.70f27f78b68ecp-52, 0x1.72a8e516914c7p-52, 0x1.745f7dc70eeddp-52,
    0x1.7616535e57320p-52, 0x1.77cd6faeff44ap-52, 0x1.7984dc8babd94p-52,
    0x1.7b3ca3c8b140ap-52, 0x1.7cf4cf3db22fcp-52, 0x1.7ead68c73dee7p-52,
    0x1.80667a486ea1fp-52, 0x1.82200dac88677p-52, 0x1.83da2ce899f16p-52,
    0x1.8594e1fd1f5bep-52, 0x1.875036f7a7ec7p-52, 0x1.890c35f47f72ep-52,
    0x1.8ac8e9205c044p-52, 0x1.8c865aba10c9dp-52, 0x1.8e44951446a28p-52,
    0x1.9003a2973b591p-52, 0x1.91c38dc288349p-52, 0x1.9384612ef0afep-52,
    0x1.954627903a28bp-52, 0x1.9708ebb70d5efp-52, 0x1.98ccb892e2a33p-52,
    0x1.9a919933f99c1p-52, 0x1.9c5798cd5d92ep-52, 0x1.9e1ec2b6f7414p-52,
    0x1.9fe7226fad24dp-52, 0x1.a1b0c39f93696p-52, 0x1.a37bb21a2c85ep-52,
    0x1.a547f9e0bbb8bp-52, 0x1.a715a724aa9a7p-52, 0x1.a8e4c64a0313fp-52,
    0x1.aab563e9ff10ap-52, 0x1.ac878cd5af5cfp-52, 0x1.ae5b4e18bb338p-52,
    0x1.b030b4fc3a11bp-52, 0x1.b207cf09a985cp-52, 0x1.b3e0aa0e00c01p-52,
    0x1.b5bb541ce3d04p-52, 0x1.b797db93f8928p-52, 0x1.b9764f1e5f73dp-52,
    0x1.bb56bdb85256ep-52, 0x1.bd3936b2ec0a2p-52, 0x1.bf1dc9b81ae82p-52,
    0x1.c10486cec16a0p-52, 0x1.c2ed7e5f07a2dp-52, 0x1.c4d8c136e0d1dp-52,
    0x1.c6c6608ec8705p-52, 0x1.c8b66e0eba617p-52, 0x1.caa8fbd36a2abp-52,
    0x1.cc9e1c73bd690p-52, 0x1.ce95e3068e037p-52, 0x1.d0906328b8f6ep-52,
    0x1.d28db1037ef20p-52, 0x1.d48de1533c647p-52, 0x1.d691096e7f123p-52,
    0x1.d8973f4d7fba4p-52, 0x1.daa0999206e6ep-52, 0x1.dcad2f8fc490cp-52,
    0x1.debd195522e34p-52, 0x1.e0d06fb49d219p-52, 0x1.e2e74c4ea46f3p-52,
    0x1.e501c99c1d186p-52, 0x1.e72002f97fe23p-52, 0x1.e94214b2abf09p-52,
    0x1.eb681c0f76f08p-52, 0x1.ed9237610a73ap-52, 0x1.efc086101eca9p-52,
    0x1.f1f328ac25321p-52, 0x1.f42a40fb74d6dp-52, 0x1.f665f20c90168p-52,
    0x1.f8a6604899782p-52, 0x1.faebb187122bfp-52, 0x1.fd360d22fe785p-52,
    0x1.ff859c118f60bp-52, 0x1.00ed447d3a075p-51, 0x1.021a8028fc947p-51,
    0x1.034a983a902abp-51, 0x1.047da4e3ef5c7p-51, 0x1.05b3bf6adb37ep-51,
    0x1.06ed023a72669p-51, 0x1.082988f632e18p-51, 0x1.0969708e8a255p-51,
    0x1.0aacd7571c0c5p-51, 0x1.0bf3dd1eed449p-51, 0x1.0d3ea34aa3d32p-51,
    0x1.0e8d4cf116594p-51, 0x1.0fdffefa69fb8p-51, 0x1.1136e04207043p-51,
    0x1.129219bbb5d37p-51, 0x1.13f1d69c4096fp-51, 0x1.1556448602e3dp-51,
    0x1.16bf93b9deef5p-51, 0x1.182df74d21262p-51, 0x1.19a1a564eebadp-51,
    0x1.1b1ad777f2f8fp-51, 0x1.1c99ca971a695p-51, 0x1.1e1ebfbe4ae39p-51,
    0x1.1fa9fc2e2d901p-51, 0x1.213bc9d04cc82p-51, 0x1.22d477a6fd3efp-51,
    0x1.24745a4ac9c24p-51, 0x1.261bcc77658e0p-51, 0x1.27cb2faa8592ep-51,
    0x1.2982ecd770e78p-51, 0x1.2b437532a0a53p-51, 0x1.2d0d43196db97p-51,
    0x1.2ee0db1a978f5p-51, 0x1.30becd256aeeep-51, 0x1.32a7b5e68a4a3p-51,
    0x1.349c405ae12a3p-51, 0x1.369d27a33a840p-51, 0x1.38ab39256410ap-51,
    0x1.3ac7570ae88fap-51, 0x1.3cf27b31704a6p-51, 0x1.3f2dbaa60f475p-51,
    0x1.417a49cb9e5dbp-51, 0x1.43d9815545e94p-51, 0x1.464ce44a73a16p-51,
    0x1.48d62759c43bdp-51, 0x1.4b7739d6b5a28p-51, 0x1.4e3250dcd8903p-51,
    0x1.5109f53e9ac42p-51, 0x1.54011523a7e43p-51, 0x1.571b1a94ae41cp-51,
    0x1.5a5c08b718dd9p-51, 0x1.5dc8a243ad0fep-51, 0x1.61669cf861e4bp-51,
    0x1.653ce7b006aeap-51, 0x1.69540be9fe5c2p-51, 0x1.6db6b8d09e231p-51,
    0x1.72728f05f7a33p-51, 0x1.7799556090672p-51, 0x1.7d42df4d6ce8bp-51,
    0x1.839030529f233p-51, 0x1.8ab0fbfaa7c14p-51, 0x1.92ee0946f4496p-51,
    0x1.9cbee014057aap-51, 0x1.a8fdc78947759p-51, 0x1.b981f3878fdb0p-51,
    0x1.d3bb48209ad33p-51,
};

static const double zig_f[LD_ZIG_LAYERS] = {
    0x1.0000000000000p+0,  0x1.f446ac979f084p-1, 0x1.eb7545b6ca912p-1,
    0x1.e3f11e027f074p-1,  0x1.dd36fa704de92p-1, 0x1.d70920657bcefp-1,
    0x1.d144978a119d9p-1,  0x1.cbd33a8a72de8p-1, 0x1.c6a5ecea9787cp-1,
    0x1.c1b1cd9eebae7p-1,  0x1.bceeb4ee1dc7fp-1, 0x1.b85653a8ff54fp-1,
    0x1.b3e3a8234dd0ep-1,  0x1.af92a3f6ce8a0p-1, 0x1.ab5fef17a2502p-1,
    0x1.a748bd550c9dep-1,  0x1.a34aafdf5af0cp-1, 0x1.9f63bee651fd5p-1,
    0x1.9b9228d24067ep-1,  0x1.97d4657617abep-1, 0x1.94291c21b7a43p-1,
    0x1.908f1bd31714bp-1,  0x1.8d0554fe60aa4p-1, 0x1.898ad48badefep-1,
    0x1.861ebfc37bca8p-1,  0x1.82c050f56cf6bp-1, 0x1.7f6ed4b20e2c8p-1,
    0x1.7c29a779c6855p-1,  0x1.78f033ca0b0d2p-1, 0x1.75c1f0770d852p-1,
    0x1.729e5f43f6d0ep-1,  0x1.6f850baea7aebp-1, 0x1.6c7589e635a86p-1,
    0x1.696f75e513b26p-1,  0x1.667272a92e320p-1, 0x1.637e298550c15p-1,
    0x1.6092498802661p-1,  0x1.5dae86f4aff66p-1, 0x1.5ad29acc85c85p-1,
    0x1.57fe4264c8d8cp-1,  0x1.55313f08d9e44p-1, 0x1.526b55a656cd3p-1,
    0x1.4fac4e820b665p-1,  0x1.4cf3f4f494ebep-1, 0x1.4a42172dc5276p-1,
    0x1.479685fdf500fp-1,  0x1.44f114a493676p-1, 0x1.425198a355fe0p-1,
    0x1.3fb7e99585b7fp-1,  0x1.3d23e10af31a1p-1, 0x1.3a955a662cd0bp-1,
    0x1.380c32bda00d2p-1,  0x1.358848bf550e6p-1, 0x1.33097c9703a32p-1,
    0x1.308fafd6438ebp-1,  0x1.2e1ac55ea3be9p-1, 0x1.2baaa14d79545p-1,
    0x1.293f28e93cd11p-1,  0x1.26d84290504e9p-1, 0x1.2475d5a90db80p-1,
    0x1.2217ca92ff7eep-1,  0x1.1fbe0a992961dp-1, 0x1.1d687fe549966p-1,
    0x1.1b171573fd10ep-1,  0x1.18c9b709b3c4dp-1, 0x1.16805128639d6p-1,
    0x1.143ad105ea998p-1,  0x1.11f9248311f34p-1, 0x1.0fbb3a232590fp-1,
    0x1.0d8101041429cp-1,  0x1.0b4a68d70d9abp-1, 0x1.091761d995d7dp-1,
    0x1.06e7dccf03c33p-1,  0x1.04bbcafa63f2bp-1, 0x1.02931e18b8228p-1,
    0x1.006dc85b8cac2p-1,  0x1.fc9778c7bbd9bp-2, 0x1.f859da7a900c4p-2,
    0x1.f4229cb2f7aecp-2,  0x1.eff1a717e8f8ep-2, 0x1.ebc6e20bd1f4fp-2,
    0x1.e7a236a4ec3bfp-2,  0x1.e3838ea5f9b7ep-2, 0x1.df6ad47763a03p-2,
    0x1.db57f320b56aap-2,  0x1.d74ad6426de2dp-2, 0x1.d3436a102107bp-2,
    0x1.cf419b4ae5b69p-2,  0x1.cb45573c0a843p-2, 0x1.c74e8bb00d7c3p-2,
    0x1.c35d26f1d2cb5p-2,  0x1.bf7117c616a14p-2, 0x1.bb8a4d6716d8fp-2,
    0x1.b7a8b78071319p-2,  0x1.b3cc462b331c8p-2, 0x1.aff4e9ea18550p-2,
    0x1.ac2293a5f5a9ap-2,  0x1.a85534aa4d87dp-2, 0x1.a48cbea20c04bp-2,
    0x1.a0c923946843bp-2,  0x1.9d0a55e1e93dcp-2, 0x1.995048418c0c3p-2,
    0x1.959aedbe09f8fp-2,  0x1.91ea39b33cb13p-2, 0x1.8e3e1fcb9f113p-2,
    0x1.8a9693fde9185p-2,  0x1.86f38a8ac5ab2p-2, 0x1.8354f7faa0dd5p-2,
    0x1.7fbad11b8d90dp-2,  0x1.7c250aff414acp-2, 0x1.78939af9252e6p-2,
    0x1.7506769c7b1e8p-2,  0x1.717d93ba96148p-2, 0x1.6df8e86124ca6p-2,
    0x1.6a786ad88de1ep-2,  0x1.66fc11a25cbdfp-2, 0x1.6383d377be513p-2,
    0x1.600fa7480d2c6p-2,  0x1.5c9f84376c241p-2, 0x1.5933619d6eebcp-2,
    0x1.55cb3703d00fdp-2,  0x1.5266fc2533beap-2, 0x1.4f06a8ebf6d91p-2,
    0x1.4baa357109ca2p-2,  0x1.485199fad6ad4p-2, 0x1.44fccefc324fcp-2,
    0x1.41abcd1357a18p-2,  0x1.3e5e8d08ed2d8p-2, 0x1.3b1507cf143acp-2,
    0x1.37cf368081376p-2,  0x1.348d125f9d19cp-2, 0x1.314e94d5af62dp-2,
    0x1.2e13b77210764p-2,  0x1.2adc73e963fdap-2, 0x1.27a8c414db11bp-2,
    0x1.2478a1f17de86p-2,  0x1.214c079f7cc9cp-2, 0x1.1e22ef6188113p-2,
    0x1.1afd539c2f04cp-2,  0x1.17db2ed5454e5p-2, 0x1.14bc7bb34ee63p-2,
    0x1.11a134fcf241dp-2,  0x1.0e895598709bdp-2, 0x1.0b74d88b242d4p-2,
    0x1.0863b8f904331p-2,  0x1.0555f2242e9d4p-2, 0x1.024b7f6c7747ap-2,
    0x1.fe88b89df93bcp-3,  0x1.f88108cb8322fp-3, 0x1.f27fe6ce998ccp-3,
    0x1.ec854a4c99c3ep-3,  0x1.e6912b2283cd9p-3, 0x1.e0a3816457181p-3,
    0x1.dabc455c79006p-3,  0x1.d4db6f8b2514cp-3, 0x1.cf00f8a5e6fcap-3,
    0x1.c92cd9971df52p-3,  0x1.c35f0b7d89d46p-3, 0x1.bd9787abe18a2p-3,
    0x1.b7d647a8731abp-3,  0x1.b21b452ccd13ap-3, 0x1.ac667a2571805p-3,
    0x1.a6b7e0b19267cp-3,  0x1.a10f7322d7e3cp-3, 0x1.9b6d2bfd2fe5ap-3,
    0x1.95d105f6a7c27p-3,  0x1.903afbf74fa68p-3, 0x1.8aab09192815ap-3,
    0x1.852128a819a38p-3,  0x1.7f9d5621f7174p-3, 0x1.7a1f8d368a323p-3,
    0x1.74a7c9c7ab5a8p-3,  0x1.6f3607e964719p-3, 0x1.69ca43e21f261p-3,
    0x1.64647a2adf1a4p-3,  0x1.5f04a76f88400p-3, 0x1.59aac88f31d74p-3,
    0x1.5456da9c8683bp-3,  0x1.4f08dade31fc6p-3, 0x1.49c0c6cf5ce30p-3,
    0x1.447e9c20375d6p-3,  0x1.3f4258b6931afp-3, 0x1.3a0bfaae8d7eep-3,
    0x1.34db805b4ab89p-3,  0x1.2fb0e847c2a65p-3, 0x1.2a8c3137a071bp-3,
    0x1.256d5a2835eb6p-3,  0x1.2054625183c34p-3, 0x1.1b41492757d42p-3,
    0x1.16340e5a82d62p-3,  0x1.112cb1da26eb8p-3, 0x1.0c2b33d5209b9p-3,
    0x1.072f94bb8bf84p-3,  0x1.0239d54067d29p-3, 0x1.fa93ecb6b222bp-4,
    0x1.f0bff29520e16p-4,  0x1.e6f7bf29aa546p-4, 0x1.dd3b56176e88bp-4,
    0x1.d38abb9bd91dcp-4,  0x1.c9e5f493b7404p-4, 0x1.c04d0680b100ap-4,
    0x1.b6bff78f2e228p-4,  0x1.ad3ece9caf627p-4, 0x1.a3c9933ea627bp-4,
    0x1.9a604dc9d5b0bp-4,  0x1.9103075a4a09fp-4, 0x1.87b1c9dbf2846p-4,
    0x1.7e6ca013eefccp-4,  0x1.753395aaa116dp-4, 0x1.6c06b73694a46p-4,
    0x1.62e6124854d10p-4,  0x1.59d1b5774669dp-4, 0x1.50c9b06fa2babp-4,
    0x1.47ce1401b2212p-4,  0x1.3edef23269a81p-4, 0x1.35fc5e4d93e69p-4,
    0x1.2d266cf9b310dp-4,  0x1.245d344dd0d8fp-4, 0x1.1ba0cbe97897ep-4,
    0x1.12f14d0f2179dp-4,  0x1.0a4ed2c159622p-4, 0x1.01b979e30e496p-4,
    0x1.f262c2b6c6e34p-5,  0x1.e16d547b25185p-5, 0x1.d092efeadf162p-5,
    0x1.bfd3e0f282a2cp-5,  0x1.af30790385f6fp-5, 0x1.9ea90f9295561p-5,
    0x1.8e3e02a68b5a9p-5,  0x1.7defb77af271cp-5, 0x1.6dbe9b398d062p-5,
    0x1.5dab23cf2add1p-5,  0x1.4db5d0e11275cp-5, 0x1.3ddf2ce98eec7p-5,
    0x1.2e27ce83df495p-5,  0x1.1e9059f1f6ab6p-5, 0x1.0f1982e968009p-5,
    0x1.ff881d718a5b5p-6,  0x1.e121adb828c69p-6, 0x1.c301983cd0912p-6,
    0x1.a529f4e22ebf4p-6,  0x1.879d1b600c10bp-6, 0x1.6a5daf40bbf87p-6,
    0x1.4d6eaf2fbb067p-6,  0x1.30d388dab5e1ap-6, 0x1.149033460301ap-6,
    0x1.f152a4f72dd53p-7,  0x1.ba48d274f8fb3p-7, 0x1.841040d8da47ep-7,
    0x1.4eb96421acfe7p-7,  0x1.1a59229952f95p-7, 0x1.ce160f8ec683cp-8,
    0x1.69ea8d90cb864p-8,  0x1.08a1f03b0b205p-8, 0x1.55f9f43c1b070p-9,
    0x1.4a605b6b9f70dp-10,
};

/* Marsaglia's tail method (1964): x = R + e1/R with e1, e2 exponential, kept when
 * 2*e2 > (e1/R)^2. log1p(-u) of a u in [0, 1) never takes log(0). */
static double zig_tail(ld_pcg32 *rng)
{
    for (;;) {
        double x = -log1p(-ld_pcg32_double(rng)) / LD_ZIG_R;
        double y = -log1p(-ld_pcg32_double(rng));
        if (y + y > x * x)
            return LD_ZIG_R + x;
    }
}

/* What the slow path hands back: the accepted magnitude, or -1 to try again, and the
 * state after the outputs it took. Two scalars come back in registers. */
typedef struct zig_edge_result {
    double x;
    uint64_t state;
} zig_edge_result;

/* The slow path of one attempt, 1.5% of them: the tail for the base layer, else
 * the wedge between the layer's rectangle and f, where x is kept when a uniform point
 * of the wedge's box falls under f. Out of line, so that the fast path stays small. */
__attribute__((noinline)) static zig_edge_result zig_edge(uint64_t state, uint64_t inc,
                                                          unsigned layer, double x)
{
    ld_pcg32 rng = {state, inc};
    if (layer == 0) {
        x = zig_tail(&rng);
    } else {
        double y =
            zig_f[layer] + ld_pcg32_double(&rng) * (zig_f[layer - 1] - zig_f[layer]);
        x = y < exp(-0.5 * x * x) ? x : -1.0;
    }
    return (zig_edge_result){x, rng.state};
}

/* Set the sign bit of a magnitude from bit 8 of an attempt's bits, without a branch:
 * the sign is a coin toss, and a branch on it would mispredict half the time. */
static inline double zig_signed(double magnitude, uint64_t bits)
{
    uint64_t b;
    memcpy(&b, &magnitude, sizeof b);
    b |= (bits & 0x100u) << 55u;
    memcpy(&magnitude, &b, sizeof b);
    return magnitude;
}

/* One normal: bits 0-7 pick the layer, bit 8 the sign, bits 9-60 the abscissa. The
 * state is a bare word, which a caller's loop keeps in a register. */
static inline double zig_normal(uint64_t *state, uint64_t inc)
{
    for (;;) {
        uint64_t bits = pcg32_pair(state, inc);
        unsigned layer = (unsigned)(bits & 0xffu);
        uint64_t u = (bits >> 9u) & ((1ULL << 52u) - 1u);
        double x = (double)(int64_t)u * zig_w[layer];
        if (u < zig_k[layer])
            return zig_signed(x, bits);
        zig_edge_result edge = zig_edge(*state, inc, layer, x);
        *state = edge.state;
        if (edge.x >= 0.0)
            return zig_signed(edge.x, bits);
    }
}

double ld_pcg32_normal(ld_pcg32 *rng)
{
    return zig_normal(&rng->state, rng->inc);
}

/* The same draws as ld_pcg32_normal, from a local copy of the state. */
void ld_pcg32_normal_fill(ld_pcg32 *rng, double *out, size_t n)
{
    uint64_t state = rng->state;
    for (size_t i = 0; i < n; i++)
        out[i] = zig_normal(&state, rng->inc);
    rng->state = state;
}

/* The wide fill has an AVX-512 copy only, the one x86-64 vector set with a 64-bit
 * multiply: an AVX2 copy, whose compiler makes each of those of three 32-bit ones,
 * measured slower than the scalar fill. Eight lanes of 64 bits: the helpers that take
 * them by value are always inlined into the copy, so no call passes one across a
 * target's ABI. Those helpers are compiled for AVX-512 themselves, as the table
 * gathers and the compare to a mask are AVX-512 intrinsics. */
#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#define ZIG_AVX512 __attribute__((always_inline, target("avx512f,avx512dq")))
typedef uint64_t zig_vu __attribute__((vector_size(64)));
typedef double zig_vd __attribute__((vector_size(64)));
#define ZIG_LANES 8u
#define ZIG_VU(x) ((zig_vu){(x), (x), (x), (x), (x), (x), (x), (x)})

/* The jump of j pair steps (two outputs each): state_j = mul[j]*state + add[j]. */
typedef struct zig_jump {
    zig_vu mul, add;
    uint64_t mul8, add8; /* the jump of eight, to the next block */
} zig_jump;

static zig_jump zig_jump_of(uint64_t inc)
{
    const uint64_t m2 = LD_PCG32_MULT * LD_PCG32_MULT, c2 = inc * (LD_PCG32_MULT + 1u);
    zig_jump j;
    uint64_t mul = 1, add = 0;
    for (unsigned l = 0; l < ZIG_LANES; l++) {
        j.mul[l] = mul;
        j.add[l] = add;
        mul *= m2;
        add = add * m2 + c2;
    }
    j.mul8 = mul;
    j.add8 = add;
    return j;
}

/* ld_pcg32_output on every lane; the rotate is of the low 32 bits. */
static inline ZIG_AVX512 zig_vu zig_output(zig_vu old)
{
    zig_vu xs = (((old >> 18u) ^ old) >> 27u) & ZIG_VU(0xffffffffu);
    zig_vu rot = old >> 59u;
    return ((xs >> rot) | (xs << ((ZIG_VU(32) - rot) & ZIG_VU(31)))) &
           ZIG_VU(0xffffffffu);
}

/* One block of eight attempts from state s: their accepted values go to out, in order,
 * up to the first that misses the fast path; out has room for eight. Returns how many
 * went (8 when none missed), and leaves in *miss the bits and state after the one that
 * missed. */
typedef struct zig_miss {
    uint64_t bits, state;
} zig_miss;

static inline ZIG_AVX512 unsigned zig_block(uint64_t s, uint64_t inc, const zig_jump *j,
                                            double *out, zig_miss *miss)
{
    zig_vu old = j->mul * ZIG_VU(s) + j->add;
    zig_vu mid = old * ZIG_VU(LD_PCG32_MULT) + ZIG_VU(inc);
    zig_vu bits = (zig_output(old) << 32u) | zig_output(mid);
    zig_vu u = (bits >> 9u) & ZIG_VU((1ULL << 52u) - 1u);
    /* The layers' entries, gathered: on an AVX-512 Xeon this took select's VaR from
     * 540 to 455 ms, against eight loads and inserts per table. */
    __m512i layer, uv, k, w;
    zig_vu layers = bits & ZIG_VU(0xffu);
    memcpy(&layer, &layers, sizeof layer);
    memcpy(&uv, &u, sizeof uv);
    k = _mm512_i64gather_epi64(layer, (const void *)zig_k, 8);
    w = _mm512_i64gather_epi64(layer, (const void *)zig_w, 8);
    /* u < 2^52, so u's double is exact: the bits of 2^52 + u, less 2^52. */
    zig_vu ubits = u | ZIG_VU(0x4330000000000000ULL);
    zig_vd ud, wd;
    memcpy(&ud, &ubits, sizeof ud);
    memcpy(&wd, &w, sizeof wd);
    zig_vd x = (ud - 0x1p52) * wd;
    zig_vu xbits;
    memcpy(&xbits, &x, sizeof xbits);
    xbits |= (bits & ZIG_VU(0x100u)) << 55u;
    /* The lanes that took the fast path, as a mask register: a compare of the vector
     * extension's leaves a vector, which GCC turned into eight extracts. */
    unsigned mask = _mm512_cmplt_epu64_mask(uv, k);
    /* All eight are stored: those past the miss are written over by what follows. */
    memcpy(out, &xbits, sizeof xbits);
    unsigned l = (unsigned)__builtin_ctz(~mask);
    if (l < ZIG_LANES)
        *miss = (zig_miss){bits[l], old[l] * (LD_PCG32_MULT * LD_PCG32_MULT) +
                                        inc * (LD_PCG32_MULT + 1u)};
    return l;
}

/* The rest of the attempt that missed the fast path, as zig_normal goes on with it. */
static double zig_after_miss(uint64_t *state, uint64_t inc, uint64_t bits)
{
    unsigned layer = (unsigned)(bits & 0xffu);
    uint64_t u = (bits >> 9u) & ((1ULL << 52u) - 1u);
    zig_edge_result edge =
        zig_edge(*state, inc, layer, (double)(int64_t)u * zig_w[layer]);
    *state = edge.state;
    return edge.x >= 0.0 ? zig_signed(edge.x, bits) : zig_normal(state, inc);
}

static inline ZIG_AVX512 void zig_fill_body(ld_pcg32 *rng, double *out, size_t n)
{
    uint64_t state = rng->state, inc = rng->inc;
    zig_jump j = zig_jump_of(inc);
    size_t i = 0;
    while (n - i >= ZIG_LANES) {
        zig_miss miss = {0, 0};
        unsigned went = zig_block(state, inc, &j, out + i, &miss);
        i += went;
        if (went == ZIG_LANES) {
            state = state * j.mul8 + j.add8;
            continue;
        }
        state = miss.state;
        out[i++] = zig_after_miss(&state, inc, miss.bits);
    }
    for (; i < n; i++)
        out[i] = zig_normal(&state, inc);
    rng->state = state;
}

__attribute__((target("avx512f,avx512dq"))) static void
zig_fill_avx512(ld_pcg32 *rng, double *out, size_t n)
{
    zig_fill_body(rng, out, n);
}
#endif

void ld_pcg32_normal_fill_wide(ld_pcg32 *rng, double *out, size_t n,
                               enum ld_pcg_wide wide)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (wide == LD_PCG_WIDE_AVX512) {
        zig_fill_avx512(rng, out, n);
        return;
    }
#else
    (void)wide;
#endif
    ld_pcg32_normal_fill(rng, out, n);
}
