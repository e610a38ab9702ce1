DROP INDEX customers_sort_name_idx;
