/*
 * pngdump.c - print what a PNG holds, for tests of image output.
 *
 *   pngdump FILE [X Y ...]
 *
 * Prints "size W x H", one "text KEY: VALUE" line per text chunk, then
 * "pixel X Y: R G B" for each requested pixel (X from the left, Y from the
 * top, as in the file). Reads the file with libpng; exits 1 on any error.
 */
#include <png.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 2 || argc % 2) {
        fprintf(stderr, "usage: pngdump FILE [X Y ...]\n");
        return 2;
    }
    png_image img;
    png_bytep buf;
    FILE *fp = fopen(argv[1], "rb");
    if (!fp) {
        perror(argv[1]);
        return 1;
    }
    /* Text chunks through the classic interface. */
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) {
        fprintf(stderr, "pngdump: %s is not a readable PNG\n", argv[1]);
        return 1;
    }
    png_init_io(png, fp);
    png_read_info(png, info);
    printf("size %u x %u\n", png_get_image_width(png, info), png_get_image_height(png, info));
    png_textp text;
    int ntext = 0;
    png_get_text(png, info, &text, &ntext);
    for (int i = 0; i < ntext; i++)
        printf("text %s: %s\n", text[i].key, text[i].text);
    png_destroy_read_struct(&png, &info, NULL);
    fclose(fp);
    /* Pixels through the simplified interface, as 8-bit RGB. */
    for (int i = 0; i < (int)sizeof img; i++)
        ((char *)&img)[i] = 0;
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, argv[1])) {
        fprintf(stderr, "pngdump: %s\n", img.message);
        return 1;
    }
    img.format = PNG_FORMAT_RGB;
    buf = malloc(PNG_IMAGE_SIZE(img));
    if (!buf || !png_image_finish_read(&img, NULL, buf, 0, NULL)) {
        fprintf(stderr, "pngdump: %s\n", img.message);
        return 1;
    }
    for (int a = 2; a + 1 < argc; a += 2) {
        long x = atol(argv[a]), y = atol(argv[a + 1]);
        if (x < 0 || y < 0 || x >= (long)img.width || y >= (long)img.height) {
            fprintf(stderr, "pngdump: pixel %ld %ld is outside the image\n", x, y);
            return 1;
        }
        png_bytep p = buf + 3 * ((size_t)y * img.width + (size_t)x);
        printf("pixel %ld %ld: %d %d %d\n", x, y, p[0], p[1], p[2]);
    }
    free(buf);
    return 0;
}
